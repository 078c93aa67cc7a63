package caddymodules

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"golang.org/x/sync/semaphore"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// bodyRequest is a POST of n bytes with Caddy's variable table, as the
// server hands handlers; chunked hides its length.
func bodyRequest(ctx context.Context, n int, chunked bool) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(bytes.Repeat([]byte("x"), n)))
	if chunked {
		r.ContentLength = -1
	}
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{})
	return r.WithContext(ctx)
}

func TestBodyMemoryBudget(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		budget := semaphore.NewWeighted(1 << 20)
		ctx1, end1 := context.WithCancel(context.Background())
		first := bodyRequest(ctx1, 700<<10, chunked)
		if b, err := requestBody(first, 32<<20, budget); err != nil || len(b) != 700<<10 {
			t.Fatalf("chunked %v: first body: %d bytes, %v", chunked, len(b), err)
		}
		// While the first request runs, a second large body does not fit.
		_, err := requestBody(bodyRequest(context.Background(), 700<<10, chunked), 32<<20, budget)
		var ae *apierror.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Code != "server_overloaded" || ae.RetryAfter == 0 {
			t.Fatalf("chunked %v: second body: %v, want 503 server_overloaded with Retry-After", chunked, err)
		}
		// The first request ends: its memory is given back.
		end1()
		ctx3, end3 := context.WithCancel(context.Background())
		var b []byte
		for range 100 { // context.AfterFunc runs the release on its own goroutine
			if b, err = requestBody(bodyRequest(ctx3, 700<<10, chunked), 32<<20, budget); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err != nil || len(b) != 700<<10 {
			t.Fatalf("chunked %v: after the first ended: %d bytes, %v", chunked, len(b), err)
		}
		end3()
	}
}

func TestBodyTooLargeGivesBackItsMemory(t *testing.T) {
	budget := semaphore.NewWeighted(1 << 20)
	_, err := requestBody(bodyRequest(context.Background(), 600<<10, true), 100<<10, budget)
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("error %v, want 413", err)
	}
	if !budget.TryAcquire(1 << 20) {
		t.Fatal("a refused body kept its share of the budget")
	}
}

// A body of declared length is read into memory of that length, once,
// and fits a budget of that length: the read learns that the body has
// ended before it asks for more of either.
func TestBodyOfDeclaredLengthFitsItsBudgetExactly(t *testing.T) {
	const n = 700 << 10
	budget := semaphore.NewWeighted(n)
	// bytes.Reader, unlike a server's body, gives io.EOF only on the read
	// after the last byte.
	b, err := requestBody(bodyRequest(context.Background(), n, false), 32<<20, budget)
	if err != nil || len(b) != n || !bytes.Equal(b, bytes.Repeat([]byte("x"), n)) {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if cap(b) != n {
		t.Errorf("read into %d bytes of memory, want the declared %d", cap(b), n)
	}
}

// A small body of declared length is read whatever the budget holds; one
// without a length is counted, as it may turn out large.
func TestSmallBodyTakesNoBudget(t *testing.T) {
	budget := semaphore.NewWeighted(1)
	if !budget.TryAcquire(1) {
		t.Fatal("budget")
	}
	if b, err := requestBody(bodyRequest(context.Background(), 300, false), 32<<20, budget); err != nil || len(b) != 300 {
		t.Fatalf("declared 300 bytes: %d bytes, %v", len(b), err)
	}
	var ae *apierror.Error
	if _, err := requestBody(bodyRequest(context.Background(), 300, true), 32<<20, budget); !errors.As(err, &ae) || ae.Code != "server_overloaded" {
		t.Fatalf("300 bytes without a length: %v, want server_overloaded", err)
	}
}
