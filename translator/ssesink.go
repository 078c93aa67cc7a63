package translator

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

var (
	errStreamNotStarted = errors.New("translator: stream written before Start")
	errStreamClosed     = errors.New("translator: stream already finished")
)

// sseSink is the connection side of an event stream, shared by
// StreamWriter and ResponsesWriter, which keep only their framing: the
// headers, the lock, the sticky first write error, the idle clock for the
// heartbeat, and writes that flush at once or wait for Flush.
//
// The writer that embeds it holds mu around every call of a *Locked
// method; the exported methods lock by themselves. After the first failed
// write every later write is a no-op returning that error, since the
// client is gone.
type sseSink struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	now func() time.Time

	mu        sync.Mutex
	started   bool
	done      bool
	lastWrite time.Time
	err       error
	buf       []byte // the frame being built, reused between frames
	noFlush   bool   // the frame being written waits for Flush
	unflushed bool   // written since the last flush
}

// newSSESink returns a sink for w; now nil means time.Now.
func newSSESink(w http.ResponseWriter, now func() time.Time) sseSink {
	if now == nil {
		now = time.Now
	}
	return sseSink{w: w, rc: http.NewResponseController(w), now: now}
}

// lock takes the stream for one write; buffered leaves its frames in the
// response's buffer for Flush or the next write that flushes. A relay that
// knows more frames are already in hand uses it to write them with one
// flush.
func (k *sseSink) lock(buffered bool) {
	k.mu.Lock()
	k.noFlush = buffered
}

func (k *sseSink) unlock() {
	k.noFlush = false
	k.mu.Unlock()
}

// beginLocked sends the response headers once; it reports false when
// they were already sent.
func (k *sseSink) beginLocked() bool {
	if k.started {
		return false
	}
	k.started = true
	h := k.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx in front must not buffer the stream
	h.Del("Content-Length")
	k.w.WriteHeader(http.StatusOK)
	return true
}

// Started reports whether the headers were sent.
func (k *sseSink) Started() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.started
}

// Flush sends what SendBuffered left in the buffer.
func (k *sseSink) Flush() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil || !k.unflushed {
		return k.err
	}
	k.unflushed = false
	if err := k.rc.Flush(); err != nil {
		k.err = err
	}
	return k.err
}

// Comment writes an SSE comment line, which every client ignores; it
// keeps idle proxies from closing a stream that carries no events.
func (k *sseSink) Comment(text string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.frameLocked([]byte(": " + text + "\n\n"))
}

// IdleSince returns the time of the last frame.
func (k *sseSink) IdleSince() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastWrite
}

// Err returns the first write error.
func (k *sseSink) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// frameLocked writes one whole frame and, unless the write is buffered,
// flushes it.
func (k *sseSink) frameLocked(b []byte) error {
	if k.err != nil {
		return k.err
	}
	if !k.started {
		return errStreamNotStarted
	}
	if k.done {
		return errStreamClosed
	}
	k.lastWrite = k.now()
	if _, err := k.w.Write(b); err != nil {
		k.err = err
		return err
	}
	if k.noFlush {
		k.unflushed = true
		return nil
	}
	k.unflushed = false
	if err := k.rc.Flush(); err != nil {
		k.err = err
		return err
	}
	return nil
}
