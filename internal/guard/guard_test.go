package guard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// captureLog sends what the package logs to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := logger.Load()
	SetLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { logger.Store(old) })
	return &buf
}

func explode() { panic("boom") }

func TestRunRecoversLogsAndCounts(t *testing.T) {
	log := captureLog(t)
	before := Count("test_run")
	err := Run("test_run", explode)
	p, ok := errors.AsType[*Panic](err)
	if !ok || p.Value != "boom" || p.Goroutine != "test_run" {
		t.Fatalf("Run = %v, want the panic", err)
	}
	if !strings.Contains(string(p.Stack), "guard.explode") {
		t.Errorf("the stack does not show where it panicked:\n%s", p.Stack)
	}
	if got := Count("test_run"); got != before+1 {
		t.Errorf("Count = %d, want %d", got, before+1)
	}
	out := log.String()
	for _, want := range []string{`"goroutine":"test_run"`, `"panic":"boom"`, "guard.explode", `"level":"ERROR"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}

	if err := Run("test_run", func() {}); err != nil || Count("test_run") != before+1 {
		t.Errorf("a run that does not panic: %v, count %d", err, Count("test_run"))
	}
	// panic(err) is seen through; panic(nil) is a panic too.
	if err := Run("test_run", func() { panic(io.ErrUnexpectedEOF) }); !errors.Is(err, io.ErrUnexpectedEOF) || !IsPanic(err) {
		t.Errorf("panic(err): %v", err)
	}
	if err := Run("test_run", func() { panic(nil) }); !IsPanic(err) {
		t.Errorf("panic(nil): %v", err)
	}
	if IsPanic(io.EOF) {
		t.Error("IsPanic(io.EOF)")
	}
}

func TestGoKeepsTheProcess(t *testing.T) {
	captureLog(t)
	before := Count("test_go")
	done := make(chan struct{})
	Go("test_go", func() {
		defer close(done)
		explode()
	})
	<-done
	for deadline := time.Now().Add(5 * time.Second); Count("test_go") != before+1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Count = %d, want %d", Count("test_go"), before+1)
		}
	}
}

func TestLoopRestartsAfterAPanic(t *testing.T) {
	captureLog(t)
	runs := 0
	Loop(context.Background(), "test_loop", time.Millisecond, func(context.Context) {
		runs++
		if runs < 3 {
			explode()
		}
	})
	if runs != 3 {
		t.Errorf("f ran %d times; want it run again after each of two panics, then left", runs)
	}

	// A loop that panics every time ends with its context.
	ctx, cancel := context.WithCancel(context.Background())
	runs = 0
	Loop(ctx, "test_loop", time.Millisecond, func(context.Context) {
		runs++
		if runs == 5 {
			cancel()
		}
		explode()
	})
	if runs != 5 {
		t.Errorf("f ran %d times, want 5, the last cancelling", runs)
	}
}

func TestNamesAreCountedFromZero(t *testing.T) {
	name := Name("test_declared")
	seen := map[string]uint64{}
	Each(func(n string, c uint64) { seen[n] = c })
	if c, ok := seen[name]; !ok || c != 0 {
		t.Errorf("a declared name before any panic: %d, %v", c, ok)
	}
}
