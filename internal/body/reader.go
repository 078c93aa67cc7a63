// Package body reads request bodies into memory within a node's memory
// budget, of which each account may hold a share, and within a deadline
// for the whole body to arrive.
package body

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/bits"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Reader reads request bodies into memory for the handlers that parse
// them, within the node's budget and a deadline.
type Reader struct {
	MaxBytes int64         // the largest body read; larger: 413
	Timeout  time.Duration // for the whole body to arrive; past it: 408
	Budget   *Budget
}

// Read reads r's body, for account, into memory, and puts it back for
// handlers that read r.Body themselves, such as a reverse proxy. A
// request without a body gives nil; one with a body, never nil.
//
// Memory is taken from the budget as bytes arrive, never for what the
// request only declares: the buffer grows when it is full and at least
// one more byte has come, and each growth is taken from the account's
// share and the node's budget first; what was taken is given back when
// the request ends, or at once when the body is refused. A declared
// length above maxBytes is refused with 413 before a byte is read. A body
// that has not arrived whole within the timeout is refused with 408
// request_timeout: the connection's read deadline ends the read that
// waits, whatever the client does.
func (br *Reader) Read(w http.ResponseWriter, r *http.Request, account string) ([]byte, error) {
	return br.ReadTo(w, r, account, nil)
}

// ReadTo is Read that puts the body back as rb, when rb is not nil: for
// a caller that keeps the ReadBody in a value of its own.
func (br *Reader) ReadTo(w http.ResponseWriter, r *http.Request, account string, rb *ReadBody) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > br.MaxBytes {
		return nil, TooLarge()
	}
	var held int64
	release := func() {
		br.Budget.Give(account, held)
		held = 0
	}
	// The most the body can be: its declared length, which the server
	// does not let it exceed, else one byte past the limit.
	ceiling := br.MaxBytes + 1
	if r.ContentLength >= 0 {
		ceiling = r.ContentLength
	}
	dl := br.deadline(w)

	// A byte of room past the declared length lets the read that meets
	// the body's end find it in the buffer, where the one-byte probe
	// below would be an allocation of its own.
	body := takeBuffer(min(ceiling+1, uncountedBodyBytes))
	lr := io.LimitedReader{R: r.Body, N: br.MaxBytes + 1}
	for {
		if len(body) == cap(body) {
			// Full: one byte says whether there is more before memory is
			// taken for it.
			var one [1]byte
			n, err := lr.Read(one[:])
			for n == 0 && err == nil {
				n, err = lr.Read(one[:])
			}
			if n == 0 {
				if errors.Is(err, io.EOF) {
					break
				}
				release()
				return nil, bodyReadError(err, dl.expired())
			}
			if int64(len(body)) >= br.MaxBytes {
				release()
				return nil, TooLarge()
			}
			grown := max(min(2*int64(cap(body)), ceiling), int64(len(body))+1)
			if e := br.Budget.Take(account, grown-uncountedBodyBytes-held); e != nil {
				release()
				return nil, e
			}
			held = grown - uncountedBodyBytes
			outgrown := body
			body = append(append(takeBuffer(grown), body...), one[0])
			giveBuffer(outgrown)
			continue
		}
		n, err := lr.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && dl.expired() {
			err = os.ErrDeadlineExceeded
		}
		if err != nil {
			release()
			return nil, bodyReadError(err, dl.expired())
		}
	}
	if int64(len(body)) > br.MaxBytes {
		release()
		return nil, TooLarge()
	}
	// Cleared only once the body is read whole: the refusals above leave
	// it to DropUnread.
	dl.stop()
	if held > 0 {
		// The body stays in memory until the request ends.
		n := held
		context.AfterFunc(r.Context(), func() { br.Budget.Give(account, n) })
	}
	if rb == nil {
		rb = new(ReadBody)
	}
	rb.Reset(body)
	r.Body = rb
	return body, nil
}

// deadline sets the connection's read deadline to the body timeout from
// now; stop clears it again. Where the connection takes no deadline (a
// writer that hides it), expired tells between reads that the time is up,
// and the server's own read timeout bounds a read that waits.
func (br *Reader) deadline(w http.ResponseWriter) readDeadline {
	d := readDeadline{w: w, at: time.Now().Add(br.Timeout)}
	d.set = http.NewResponseController(w).SetReadDeadline(d.at) == nil
	return d
}

// readDeadline is a body's deadline (Reader.deadline): a value, where
// closures of it would be three allocations a request.
type readDeadline struct {
	w   http.ResponseWriter
	at  time.Time
	set bool // on the connection, to be cleared by stop
}

func (d *readDeadline) expired() bool { return time.Now().After(d.at) }

func (d *readDeadline) stop() {
	if d.set {
		_ = http.NewResponseController(d.w).SetReadDeadline(time.Time{})
	}
}

// unreadBodyGrace bounds how long the server may go on reading the body
// of a request refused before its body was read whole.
const unreadBodyGrace = time.Second

// DropUnread bounds what the server does with the body of a request
// refused before its body was read whole. Go's server reads up to 256 KiB
// of it, before writing the answer, to keep the connection: a client
// still sending gets its answer and, past that, a closed connection
// without a reset that would lose the answer; one that stalls would hold
// the answer until the server's read timeout. The connection's read
// deadline is set unreadBodyGrace from now, so that no refusal waits
// longer for a body nobody will use. Call it only for a body not read.
func DropUnread(w http.ResponseWriter, r *http.Request) {
	if !HasBody(r) {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(unreadBodyGrace))
}

// bodyReadError is the answer to a body that could not be read: 408 when
// its time was up, else 400 (the client went away, or sent a malformed
// chunk).
func bodyReadError(err error, expired bool) *apierror.Error {
	if expired || errors.Is(err, os.ErrDeadlineExceeded) {
		e := apierror.New(http.StatusRequestTimeout, apierror.TypeInvalidRequest, "request_timeout",
			"The request body did not arrive in time.")
		return e
	}
	return apierror.InvalidRequest("invalid_body", "The request body could not be read.")
}

// ReadBody gives a request the body already read from it, in one
// allocation where io.NopCloser(bytes.NewReader(body)) takes two.
type ReadBody struct{ bytes.Reader }

// NewReadBody reads body.
func NewReadBody(body []byte) *ReadBody {
	b := new(ReadBody)
	b.Reset(body)
	return b
}

// Close implements io.Closer.
func (*ReadBody) Close() error { return nil }

// TooLarge is the answer to a body larger than an endpoint accepts.
func TooLarge() *apierror.Error {
	return apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest,
		"request_too_large", "The request body is larger than this endpoint accepts.")
}

func errBudget() *apierror.Error {
	e := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "server_overloaded",
		"The gateway is holding as many large request bodies as it may. Retry shortly.")
	e.RetryAfter = 1
	return e
}

func errAccountShare() *apierror.Error {
	return apierror.RateLimited("This account's requests in flight hold as much request body memory as one account may. "+
		"Retry when they finish.", 1)
}

// HasBody reports whether r carries a body: one of declared length above
// zero, or of unknown length.
func HasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// growBuffers keep the buffers a body outgrew, by size: 4 KiB, then
// each double up to maxGrownBuffer. A body past its first buffer is read
// into one twice as large, and so on, as its bytes arrive; all but the
// last are garbage once it is copied on, about one and a half times the
// body (28 KB for a prompt of 20 KB), which the next long body reuses.
// The last buffer is the body the request keeps, pooled or not.
var growBuffers [growBufferSizes]sync.Pool // *[]byte

// maxGrownBuffer is the largest buffer kept for reuse: a larger one
// would hold its memory, out of every budget, until a collection.
// growBufferSizes counts the sizes from 4 KiB to it.
const (
	maxGrownBuffer  = 1 << 20
	growBufferSizes = 9
)

// growBufferIndex is the pool of buffers of n bytes, or -1 for a size
// that is not pooled.
func growBufferIndex(n int64) int {
	if n < uncountedBodyBytes || n > maxGrownBuffer || n&(n-1) != 0 {
		return -1
	}
	return bits.Len64(uint64(n/uncountedBodyBytes)) - 1
}

// takeBuffer is an empty buffer of n bytes, a reused one if n is a
// pooled size.
func takeBuffer(n int64) []byte {
	if i := growBufferIndex(n); i >= 0 {
		if b, ok := growBuffers[i].Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, n)
}

// giveBuffer keeps b, which nothing refers to any more, for reuse.
func giveBuffer(b []byte) {
	if i := growBufferIndex(int64(cap(b))); i >= 0 {
		b = b[:0]
		growBuffers[i].Put(&b)
	}
}
