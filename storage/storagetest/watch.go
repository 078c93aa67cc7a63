package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// eventTimeout bounds the wait for a notification that should arrive at
// once; only a broken watcher takes this long.
const eventTimeout = 10 * time.Second

// RunKeyWatcher checks the storage.KeyWatcher contract of the stores open
// opens, which must implement it.
func RunKeyWatcher(t *testing.T, open Opener) {
	h := &harness{open: open}
	t.Run("SeesRevocationsFromAnotherStore", func(t *testing.T) {
		watched, other := h.store(t, storage.Options{}), h.store(t, storage.Options{})
		ctx := t.Context()
		a := mustAccount(t, other, "alice")
		k, _ := mustKey(t, other, a.ID)
		_, hash2 := mustKey(t, other, a.ID)
		_, hash3 := mustKey(t, other, a.ID)
		// Revoked before anyone watches: the deletion must not announce it.
		if _, err := other.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		k4, hash4 := mustKey(t, other, a.ID)

		w, ok := watched.(storage.KeyWatcher)
		if !ok {
			t.Fatalf("%T does not implement storage.KeyWatcher", watched)
		}
		sink := NewSink()
		stop := Watch(t, w, sink)
		sink.Expect(t, "live")

		if _, err := other.RevokeKey(ctx, k4.ID); err != nil {
			t.Fatal(err)
		}
		sink.Expect(t, "revoked "+hash4)
		// Revoking again changes nothing and announces nothing; the next
		// event is the account deletion's.
		if _, err := other.RevokeKey(ctx, k4.ID); err != nil {
			t.Fatal(err)
		}
		if err := other.DeleteAccount(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		sink.ExpectSet(t, "revoked "+hash2, "revoked "+hash3)

		stop()
		sink.Expect(t, "not live")
	})
}

// Sink is a storage.KeySink that records events as strings: "live",
// "not live" and "revoked HASH".
type Sink struct {
	events chan string
}

// NewSink returns an empty Sink.
func NewSink() *Sink { return &Sink{events: make(chan string, 1000)} }

func (s *Sink) Live(live bool) {
	if live {
		s.events <- "live"
	} else {
		s.events <- "not live"
	}
}

func (s *Sink) Revoked(hash string) { s.events <- "revoked " + hash }

// Next returns the next event, failing t if none comes in time.
func (s *Sink) Next(t testing.TB) string {
	t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-time.After(eventTimeout):
		t.Fatalf("no key event within %v", eventTimeout)
		return ""
	}
}

// Expect fails t unless the next event is want.
func (s *Sink) Expect(t testing.TB, want string) {
	t.Helper()
	if got := s.Next(t); got != want {
		t.Fatalf("key event %q, want %q", got, want)
	}
}

// ExpectSet fails t unless the next events are want, in any order.
func (s *Sink) ExpectSet(t testing.TB, want ...string) {
	t.Helper()
	missing := make(map[string]bool)
	for _, w := range want {
		missing[w] = true
	}
	for range want {
		got := s.Next(t)
		if !missing[got] {
			t.Fatalf("key event %q, want one of %v", got, keys(missing))
		}
		delete(missing, got)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Watch runs w.WatchKeys(sink) until the returned stop is called (or t
// ends); stop waits for WatchKeys to return.
func Watch(t testing.TB, w storage.KeyWatcher, sink storage.KeySink) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.WatchKeys(ctx, sink)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(eventTimeout):
			t.Errorf("WatchKeys did not return within %v of its context ending", eventTimeout)
		}
	}
	t.Cleanup(stop)
	return stop
}
