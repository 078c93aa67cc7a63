package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// modelsBackend answers GET /models with the handler models and streams
// a one-word answer that names the model it was asked for.
func modelsBackend(t *testing.T, models http.HandlerFunc) (*Client, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			asked.Add(1)
			models(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, eventStream(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, "[DONE]"))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL + "/v1", DiscoverModel: true, DiscoveryTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, &asked
}

func streamOnce(ctx context.Context, c *Client) error {
	st, err := c.Stream(ctx, Request{Model: "client-model", Messages: NewConversation(Message{Role: "user", Content: "hi"})})
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		if _, err := st.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func TestDiscoveryAsksOnceForConcurrentRequests(t *testing.T) {
	release := make(chan struct{})
	c, asked := modelsBackend(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"served-1"},{"id":"served-2"}]}`)
	})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = streamOnce(t.Context(), c) })
	}
	time.Sleep(20 * time.Millisecond) // let the requests pile up behind the one discovery
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("GET /models asked %d times, want 1", n)
	}
	if m, _ := c.discovery.resolve(t.Context(), c); m != "served-1" {
		t.Errorf("discovered %q, want the first listed model served-1", m)
	}
}

func TestDiscoveryWaitIsBoundedByTheRequest(t *testing.T) {
	hang := make(chan struct{})
	c, _ := modelsBackend(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(hang) }) // before the server's Close, which waits for this handler
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	err := streamOnce(ctx, c)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the request's own deadline", err)
	}
}

func TestDiscoveryFailureIsNotKept(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	c, asked := modelsBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"data":[{"id":"served-1"}]}`)
	})
	var ue *Error
	if err := streamOnce(t.Context(), c); !errors.As(err, &ue) || ue.Status != http.StatusServiceUnavailable {
		t.Fatalf("first request: %v, want the backend's 503 as *Error", err)
	}
	fail.Store(false)
	if err := streamOnce(t.Context(), c); err != nil {
		t.Fatalf("after the backend recovered: %v", err)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("GET /models asked %d times, want 2", n)
	}
}
