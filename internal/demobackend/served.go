package demobackend

import "time"

// Served is one chat completion the server began to answer with 200: the
// usage its answer reports and how much of the answer went out before it
// ended, whether it ran to its end, the client went away or a scripted
// break cut it. A gateway that bills per token owes a charge for each;
// tests compare them with what the gateway recorded.
//
// Requests refused before an answer began (a scripted error status, an
// unknown model, an invalid body, a client gone during Delay) are not
// served and have no Served.
type Served struct {
	// Request is the request as received; its Chat is set.
	Request Request
	// Stream is true for an event-stream answer.
	Stream bool
	// Usage is what the answer reports, scripted or counted: in a JSON
	// answer's usage, or in a stream's last chunk when the request asked
	// for it. It is the full count even when the answer was cut short.
	Usage Usage
	// Reported is true when the answer carries Usage: a JSON answer
	// always, a stream when the request asked for include_usage, a
	// Responses stream always (in response.completed).
	Reported bool
	// Generated is the completion tokens the answer was made of.
	Generated int
	// SentTokens is how many of them were written: for a stream, the
	// token frames written before it ended; for a JSON answer, Generated
	// once the whole body was written, else 0.
	SentTokens int
	// Complete is true when the whole answer was written: a stream's
	// every chunk (the usage chunk included) and [DONE], or a JSON
	// answer's whole body. A client may still have read less of it.
	Complete bool
	// Started is when the answer was resolved, before any byte of it;
	// LastToken when the write of its last token that went out began (a
	// client must have read that far before the answer can be over for
	// it), LastWrite when its last successful write began (zero if none);
	// Ended when the handler returned.
	Started, LastToken, LastWrite, Ended time.Time
}

// progress is what a completion's writer reports as it goes, for Served.
type progress struct {
	started    time.Time
	sentTokens int
	lastToken  time.Time
	lastWrite  time.Time
	complete   bool
}

// writing marks the start of a write of c's answer. Wall-clock time on
// purpose: Options.Now may be a fixed clock for the "created" field.
func (c *completion) writing() { c.progress.lastWrite = time.Now() }

// wrote counts a written frame; token marks one that carried a token.
func (c *completion) wrote(token bool) {
	if token {
		c.progress.sentTokens++
		c.progress.lastToken = c.progress.lastWrite
	}
}

// finished marks c's answer written whole.
func (c *completion) finished() { c.progress.complete = true }

// recordServed reports c as served for rec to Options.Served. It runs
// deferred, also when the answer ends with abort's panic.
func (s *Server) recordServed(rec *Request, stream bool, c *completion) {
	sv := Served{
		Request:    *rec,
		Stream:     stream,
		Usage:      c.usage,
		Reported:   !stream || rec.Chat.includeUsage() || rec.Path == responsesPath,
		Generated:  c.generated,
		SentTokens: c.progress.sentTokens,
		Complete:   c.progress.complete,
		Started:    c.progress.started,
		LastToken:  c.progress.lastToken,
		LastWrite:  c.progress.lastWrite,
		Ended:      time.Now(),
	}
	if !stream && sv.Complete {
		sv.SentTokens, sv.LastToken = c.generated, sv.LastWrite
	}
	if s.opts.Served != nil {
		s.opts.Served(sv)
	}
}
