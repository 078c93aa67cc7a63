package demobackend

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestListenAndServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	answering := make(chan struct{})
	var once sync.Once
	go func() {
		done <- ListenAndServe(ctx, "127.0.0.1:0", Options{
			Models:           []string{"demo-a"},
			TimeToFirstToken: time.Hour, // a stream still waiting when shutdown starts
			Ready:            func(u string) { ready <- u },
			// Asked for the "created" stamp once a completion is under way.
			Now: func() time.Time {
				once.Do(func() { close(answering) })
				return time.Now()
			},
		})
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") {
		t.Fatalf("base URL = %q", base)
	}

	resp, err := http.Get(base + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /models = %d", resp.StatusCode)
	}

	// A request in flight must not hold shutdown up for its TimeToFirstToken.
	inflight := make(chan error, 1)
	go func() {
		resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(`{"model":"demo-a","stream":true,"messages":[{"role":"user","content":"x"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		inflight <- err
	}()
	<-answering
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListenAndServe returned %v after cancel", err)
		}
	case <-time.After(shutdownGrace + 5*time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
	if err := <-inflight; err == nil {
		t.Fatal("a request cut by shutdown should fail, not end as an empty 200")
	}
}

func TestListenAndServeBadAddress(t *testing.T) {
	err := ListenAndServe(context.Background(), "127.0.0.1:-1", Options{})
	if err == nil || !strings.Contains(err.Error(), "demo backend") {
		t.Fatalf("err = %v", err)
	}
}
