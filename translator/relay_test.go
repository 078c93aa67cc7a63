package translator

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// flushWatcher calls onFlush with what was written when the response is
// flushed.
type flushWatcher struct {
	http.ResponseWriter
	mu      sync.Mutex
	written strings.Builder
	onFlush func(written string)
}

func (f *flushWatcher) Write(b []byte) (int, error) {
	f.mu.Lock()
	f.written.Write(b)
	f.mu.Unlock()
	return f.ResponseWriter.Write(b)
}

func (f *flushWatcher) Flush() {
	f.mu.Lock()
	s := f.written.String()
	f.mu.Unlock()
	f.onFlush(s)
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (f *flushWatcher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// TestRelayFlushesBeforeTheBackendPauses pins that text held back to be
// flushed together with what came with it still leaves when the backend
// goes quiet: the first token is flushed before the second exists.
func TestRelayFlushesBeforeTheBackendPauses(t *testing.T) {
	h := newHarness(t, harnessOptions{up: demobackend.Options{InterTokenDelay: time.Minute}})
	h.up.Enqueue(testupstream.Text("One two"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	flushedFirst := make(chan struct{})
	var once sync.Once
	began := time.Now()
	h.doWith(ctx, func(w http.ResponseWriter) http.ResponseWriter {
		return &flushWatcher{ResponseWriter: w, onFlush: func(written string) {
			if strings.Contains(written, `"content":"One"`) {
				once.Do(func() { close(flushedFirst); cancel() })
			}
		}}
	}, chatBody(true, "Say it.", ""), withUser(nil))
	select {
	case <-flushedFirst:
	default:
		t.Fatal("the first token was never flushed")
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Fatalf("the first token was flushed only after %s, when the backend spoke again", d)
	}
}
