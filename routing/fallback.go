package routing

import (
	"context"
	"net/http"
)

// Outcome is how a request fared over its model's chain of pools.
type Outcome struct {
	Err       error // the last pool's
	Wrote     bool  // something reached the client: no other pool may answer
	Fallbacks int   // pools tried after the first
}

// Fallback serves r from the pools of chain in order: the next pool
// answers when the one before failed, as failed judges its error,
// without writing a byte, and while r's context lives. onFallback is
// told of each step to the next pool.
func Fallback[P Pool](w http.ResponseWriter, r *http.Request, chain []P, failed func(error) bool,
	onFallback func(from, to P, err error)) Outcome {
	tw := &writeTracker{ResponseWriter: w}
	var out Outcome
	for i, p := range chain {
		out.Err = p.ServeHTTP(tw, r)
		if tw.wrote || !failed(out.Err) || i == len(chain)-1 || r.Context().Err() != nil {
			break
		}
		onFallback(p, chain[i+1], out.Err)
		out.Fallbacks++
	}
	out.Wrote = tw.wrote
	return out
}

// writeTracker notes whether anything was written to the client, after
// which no other pool may answer.
type writeTracker struct {
	http.ResponseWriter
	wrote bool
}

func (w *writeTracker) WriteHeader(code int) {
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *writeTracker) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer below, so that
// streams still flush event by event.
func (w *writeTracker) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type stateKey struct{}

// WithState returns ctx carrying s, for the pools' transports to read.
func WithState(ctx context.Context, s *State) context.Context {
	return context.WithValue(ctx, stateKey{}, s)
}

// StateFrom returns the State ctx carries; ok is false for a request
// routing did not send, such as an active health check.
func StateFrom(ctx context.Context) (s *State, ok bool) {
	s, ok = ctx.Value(stateKey{}).(*State)
	return s, ok
}
