// Package linebuffer gathers a log's lines in memory and writes them in
// one write when enough bytes have gathered or a time has passed since
// the oldest unwritten line: a busy process writes its log in large
// writes instead of one write(2) per line.
package linebuffer

import (
	"errors"
	"io"
	"sync"
	"time"
)

// Buffer gathers writes in memory and writes them to out when size
// bytes have gathered or interval has passed since the first of them.
// It is safe for concurrent use, as Caddy's loggers need.
type Buffer struct {
	out      io.WriteCloser
	size     int
	interval time.Duration

	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer // runs flushTimer; armed while buf holds lines
	armed  bool
	closed bool
	// passThrough makes each write go out at once: after the exit's
	// flush, and after Close, as a writer without a buffer would.
	passThrough bool
}

func New(out io.WriteCloser, size int, interval time.Duration) *Buffer {
	b := &Buffer{out: out, size: size, interval: interval, buf: make([]byte, 0, size)}
	b.timer = time.AfterFunc(time.Hour, b.flushTimer)
	b.timer.Stop()
	return b
}

// Write copies p (zap reuses its buffer) and writes it later, unless it
// fills the buffer; after Close it writes p at once.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.passThrough {
		return b.out.Write(p)
	}
	if len(b.buf)+len(p) > b.size {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) >= b.size {
		return b.out.Write(p)
	}
	b.buf = append(b.buf, p...)
	if !b.armed {
		b.armed = true
		b.timer.Reset(b.interval)
	}
	return len(p), nil
}

// flushLocked writes what has gathered. The buffer is emptied even when
// the write fails, so that a destination that keeps failing does not
// make it grow; the error goes to the caller, as an unbuffered write's
// would.
func (b *Buffer) flushLocked() error {
	if b.armed {
		b.timer.Stop()
		b.armed = false
	}
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.out.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

func (b *Buffer) flushTimer() {
	b.mu.Lock()
	defer b.mu.Unlock()
	// The timer runs this on a goroutine of its own, where a destination
	// that panics would end the process: the lines it was given are
	// dropped instead, and the next line's write meets it again.
	defer func() {
		if recover() != nil {
			b.buf = b.buf[:0]
		}
	}()
	b.armed = false
	_ = b.flushLocked() // nobody to tell; the next line's write reports a failing destination
}

// Sync writes what has gathered; zap calls it after a fatal or panic
// level entry and on Logger.Sync.
func (b *Buffer) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

// WriteThrough writes what has gathered and every later line at once.
func (b *Buffer) WriteThrough() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.flushLocked() // at exit there is nobody left to tell
	b.passThrough = true
}

// Close writes what has gathered and closes the destination, for
// Caddy's pool of writers when it lets go of one.
func (b *Buffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed, b.passThrough = true, true
	return errors.Join(b.flushLocked(), b.out.Close())
}
