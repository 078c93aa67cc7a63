package linebuffer

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordingSink is a log destination that keeps each write apart.
type recordingSink struct {
	mu     sync.Mutex
	writes [][]byte
	closed bool
}

func (s *recordingSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, bytes.Clone(p))
	return len(p), nil
}

func (s *recordingSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// got is what was written and in how many writes.
func (s *recordingSink) got() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(bytes.Join(s.writes, nil)), len(s.writes)
}

func logLine(i int) []byte {
	return fmt.Appendf(nil, "{\"n\":%d,\"pad\":\"%s\"}\n", i, strings.Repeat("x", 20))
}

func TestLineBufferWritesWhenFull(t *testing.T) {
	sink := &recordingSink{}
	b := New(sink, 120, time.Hour)
	var want string
	for i := range 3 { // 37 bytes each: 111 fit
		b.Write(logLine(i))
		want += string(logLine(i))
	}
	if got, n := sink.got(); n != 0 {
		t.Fatalf("%d writes before the buffer filled: %q", n, got)
	}
	b.Write(logLine(3)) // does not fit: the three go out in one write
	if got, n := sink.got(); n != 1 || got != want {
		t.Fatalf("%d writes %q, want 1 write %q", n, got, want)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, n := sink.got(); n != 2 || got != want+string(logLine(3)) || !sink.closed {
		t.Fatalf("after Close: %d writes %q, closed %v", n, got, sink.closed)
	}
}

func TestLineBufferWritesWithinTheInterval(t *testing.T) {
	sink := &recordingSink{}
	b := New(sink, 1<<16, 30*time.Millisecond)
	defer b.Close()
	start := time.Now()
	b.Write(logLine(1))
	b.Write(logLine(2))
	for {
		if got, n := sink.got(); n > 0 {
			if n != 1 || got != string(logLine(1))+string(logLine(2)) {
				t.Fatalf("%d writes %q", n, got)
			}
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the lines were not written within 5s of a 30ms interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("written after %v, before the interval", waited)
	}
	// The interval starts again with the next line.
	b.Write(logLine(3))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, n := sink.got(); n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the next line was not written")
		}
	}
}

func TestLineBufferKeepsOrderAroundALargeLine(t *testing.T) {
	sink := &recordingSink{}
	b := New(sink, 64, time.Hour)
	big := []byte(strings.Repeat("y", 100) + "\n")
	b.Write(logLine(1))
	b.Write(big)
	b.Write(logLine(2))
	b.Sync()
	got, n := sink.got()
	if want := string(logLine(1)) + string(big) + string(logLine(2)); got != want || n != 3 {
		t.Fatalf("%d writes %q, want 3 writes %q", n, got, want)
	}
}

func TestLineBufferWritesThroughAfterClose(t *testing.T) {
	sink := &recordingSink{}
	b := New(sink, 1<<16, time.Hour)
	b.Write(logLine(1))
	b.Close()
	b.Write(logLine(2)) // a request that finished after its config was unloaded
	if got, _ := sink.got(); got != string(logLine(1))+string(logLine(2)) {
		t.Fatalf("%q", got)
	}
}

func TestLineBufferWritesThroughAfterExit(t *testing.T) {
	sink := &recordingSink{}
	b := New(sink, 1<<16, time.Hour)
	b.Write(logLine(1))
	b.WriteThrough()
	if got, n := sink.got(); n != 1 || got != string(logLine(1)) {
		t.Fatalf("at exit: %d writes %q", n, got)
	}
	b.Write(logLine(2)) // a request that outlived the servers' stop
	if got, n := sink.got(); n != 2 || got != string(logLine(1))+string(logLine(2)) || sink.closed {
		t.Fatalf("after exit: %d writes %q, closed %v", n, got, sink.closed)
	}
}

// TestLineBufferConcurrentLinesStayWhole writes from many goroutines, as
// a server's requests do, and finds every line whole and once.
func TestLineBufferConcurrentLinesStayWhole(t *testing.T) {
	sink := &recordingSink{}
	b := New(sink, 4096, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				b.Write(logLine(g*1000 + i))
			}
		})
	}
	wg.Wait()
	b.Close()
	got, _ := sink.got()
	seen := map[string]bool{}
	for l := range strings.Lines(got) {
		if seen[l] {
			t.Fatalf("line twice: %q", l)
		}
		seen[l] = true
	}
	for g := range 8 {
		for i := range 500 {
			if !seen[string(logLine(g*1000+i))] {
				t.Fatalf("line %d lost or torn", g*1000+i)
			}
		}
	}
}

// TestBufferedAccessLogLosesNoLineOnStop serves requests through Caddy
// with the access log behind switchyard_buffered, whose interval is far
// longer than the test, stops Caddy as a clean exit does, and finds a
// line for every request in the file.

// panickySink is a destination with a bug: every write panics.
type panickySink struct{ writes atomic.Int32 }

func (s *panickySink) Write([]byte) (int, error) { s.writes.Add(1); panic("destination bug") }
func (s *panickySink) Close() error              { return nil }

// TestBufferSurvivesADestinationThatPanicsOnTheTimer: a write the timer
// makes, on a goroutine of its own, that panics drops its lines instead
// of ending the process, and the buffer takes lines again.
func TestBufferSurvivesADestinationThatPanicsOnTheTimer(t *testing.T) {
	sink := &panickySink{}
	b := New(sink, 1<<16, time.Millisecond)
	if _, err := b.Write(logLine(1)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); sink.writes.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the timer never wrote")
		}
	}
	if _, err := b.Write(logLine(2)); err != nil {
		t.Fatalf("a line after the destination panicked: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); sink.writes.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the timer did not write the next line")
		}
	}
}
