// Package guard keeps a panic on one of the gateway's own goroutines from
// ending the process. Go ends the whole process when any goroutine panics
// without recovering, and net/http recovers only the goroutines it starts
// for requests: a panic on a ledger writer, a queue's sender or a
// janitor would take every other request down with it. Run and Go
// recover the panic, log it with its stack, count it by goroutine name
// (Each; the gateway exports it as switchyard_panics_recovered_total) and
// hand it back as a *Panic to the caller, which decides what becomes of
// the work in hand: fail it, do it another way, or run the loop again.
package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Panic is a panic recovered on a goroutine, as an error.
type Panic struct {
	// Goroutine is the name the goroutine was run under.
	Goroutine string
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack where it panicked.
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("panic in %s: %v", p.Goroutine, p.Value) }

// Unwrap returns the value panicked with when it is an error, so that
// errors.Is sees through a panic(err).
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Run calls f and returns nil, or, when f panicked, the panic, once it
// is logged and counted under name.
func Run(name string, f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = Recovered(name, v)
		}
	}()
	f()
	return nil
}

// Go runs f under Run on a goroutine of its own. What f was doing when
// it panicked is left as it was: use it for work whose loss costs
// nothing but the log line, or have f recover what it must finish.
func Go(name string, f func()) {
	go func() { _ = Run(name, f) }()
}

// Loop runs f under Run until it returns without panicking or ctx is
// done. After a panic it waits pause, or until ctx is done, and runs f
// again: a long-lived loop that panics is restarted rather than stopped,
// and one whose panic comes back every time costs a log line per pause,
// not a busy loop.
func Loop(ctx context.Context, name string, pause time.Duration, f func(context.Context)) {
	for {
		if Run(name, func() { f(ctx) }) == nil {
			return
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Recovered logs and counts v, a value recovered on the goroutine name,
// and returns it as a *Panic. It is for deferred functions that recover
// by themselves (to answer a waiting caller, to tell an expected panic
// such as http.ErrAbortHandler from a bug); called there, the stack it
// records still has the frames that panicked.
func Recovered(name string, v any) *Panic {
	p := &Panic{Goroutine: name, Value: v, Stack: debug.Stack()}
	counter(name).Add(1)
	logger.Load().LogAttrs(context.Background(), slog.LevelError, "recovered a panic; the process goes on",
		slog.String("goroutine", name), slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(p.Stack)))
	return p
}

// IsPanic reports whether err is, or wraps, a recovered panic.
func IsPanic(err error) bool {
	_, ok := errors.AsType[*Panic](err)
	return ok
}

var logger atomic.Pointer[slog.Logger]

func init() { logger.Store(slog.Default()) }

// SetLogger sets where recovered panics are logged. Default:
// slog.Default() as it was when the program started.
func SetLogger(l *slog.Logger) {
	if l != nil {
		logger.Store(l)
	}
}

// counts holds a counter per goroutine name: the names are the callers'
// constants, so the set stays small.
var counts sync.Map // string -> *atomic.Uint64

func counter(name string) *atomic.Uint64 {
	if c, ok := counts.Load(name); ok {
		return c.(*atomic.Uint64)
	}
	c, _ := counts.LoadOrStore(name, new(atomic.Uint64))
	return c.(*atomic.Uint64)
}

// Name declares a goroutine name and returns it, so that its count
// exists, at zero, before its first panic: a series that appears only
// with the first panic hides that panic from increase() and rate().
func Name(name string) string {
	counter(name)
	return name
}

// Count is the number of panics recovered under name.
func Count(name string) uint64 { return counter(name).Load() }

// Each calls f with every name declared or run and its count, in the
// order of the names.
func Each(f func(name string, n uint64)) {
	var names []string
	counts.Range(func(k, _ any) bool {
		names = append(names, k.(string))
		return true
	})
	sort.Strings(names)
	for _, n := range names {
		f(n, Count(n))
	}
}
