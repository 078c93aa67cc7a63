package body

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/testenv"
)

// bodyRequest is a POST of body by account; chunked hides its length.
func bodyRequest(ctx context.Context, account string, body io.Reader, n int64, chunked bool) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", body)
	r.ContentLength = n
	if chunked {
		r.ContentLength = -1
	}
	return r.WithContext(context.WithValue(ctx, accountKey{}, account))
}

type accountKey struct{}

// testReader reads for the account its requests carry.
type testReader struct{ *Reader }

func (br testReader) read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	account, _ := r.Context().Value(accountKey{}).(string)
	return br.Read(w, r, account)
}

// xBody is a request of n bytes of "x" by account.
func xBody(ctx context.Context, account string, n int, chunked bool) *http.Request {
	return bodyRequest(ctx, account, bytes.NewReader(bytes.Repeat([]byte("x"), n)), int64(n), chunked)
}

func newTestBodyReader(total, share, maxBytes int64) testReader {
	return testReader{&Reader{MaxBytes: maxBytes, Timeout: time.Minute, Budget: NewBudget(total, share)}}
}

func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code {
		t.Fatalf("%s: %v, want %d %s", what, err, status, code)
	}
}

func TestBodyMemoryBudget(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		br := newTestBodyReader(1<<20, 1<<20, 32<<20)
		w := httptest.NewRecorder()
		ctx1, end1 := context.WithCancel(context.Background())
		if b, err := br.read(w, xBody(ctx1, "a", 700<<10, chunked)); err != nil || len(b) != 700<<10 {
			t.Fatalf("chunked %v: first body: %d bytes, %v", chunked, len(b), err)
		}
		// While the first request runs, a second large body does not fit.
		_, err := br.read(w, xBody(context.Background(), "b", 700<<10, chunked))
		wantAPIError(t, fmt.Sprintf("chunked %v: second body", chunked), err, http.StatusServiceUnavailable, "server_overloaded")
		if br.Budget.Held("b") != 0 {
			t.Fatalf("chunked %v: the refused body kept %d bytes", chunked, br.Budget.Held("b"))
		}
		// The first request ends: its memory is given back.
		end1()
		ctx3, end3 := context.WithCancel(context.Background())
		var b []byte
		for range 100 { // context.AfterFunc runs the release on its own goroutine
			if b, err = br.read(w, xBody(ctx3, "b", 700<<10, chunked)); err == nil {
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

// One account's bodies cannot hold more than its share; the others keep
// the rest of the budget.
func TestBodyShareOfAnAccount(t *testing.T) {
	br := newTestBodyReader(4<<20, 1<<20, 32<<20)
	w := httptest.NewRecorder()
	ctx, end := context.WithCancel(context.Background())
	defer end()
	if _, err := br.read(w, xBody(ctx, "greedy", 900<<10, false)); err != nil {
		t.Fatal(err)
	}
	_, err := br.read(w, xBody(ctx, "greedy", 900<<10, false))
	wantAPIError(t, "the account's second body", err, http.StatusTooManyRequests, "rate_limit_exceeded")
	for _, account := range []string{"other", "third"} {
		if _, err := br.read(w, xBody(ctx, account, 900<<10, false)); err != nil {
			t.Fatalf("%s beside a greedy account: %v", account, err)
		}
	}
}

// stallingBody gives its first bytes, then waits until closed.
type stallingBody struct {
	first  []byte
	closed chan struct{}
}

func (s *stallingBody) Read(p []byte) (int, error) {
	if len(s.first) > 0 {
		n := copy(p, s.first)
		s.first = s.first[n:]
		return n, nil
	}
	<-s.closed
	return 0, io.ErrUnexpectedEOF
}

// A body that declares 32 MiB and sends ten bytes holds none of the
// budget while the rest does not come, and a declared length over the
// limit is refused before anything is read.
func TestBodyMemoryIsTakenAsBytesArrive(t *testing.T) {
	br := newTestBodyReader(1<<20, 1<<20, 32<<20)
	w := httptest.NewRecorder()
	body := &stallingBody{first: []byte(`{"model":`), closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := br.read(w, bodyRequest(context.Background(), "staller", body, 32<<20, false))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if held := br.Budget.Held("staller"); held != 0 {
		t.Fatalf("ten bytes of a declared 32 MiB hold %d bytes of the budget", held)
	}
	// Others' large bodies fit the whole budget meanwhile.
	if _, err := br.read(w, xBody(context.Background(), "other", 1<<20, false)); err != nil {
		t.Fatalf("beside a stalled body: %v", err)
	}
	close(body.closed)
	wantAPIError(t, "the stalled body", <-done, http.StatusBadRequest, "invalid_body")

	tooLarge := bodyRequest(context.Background(), "big", strings.NewReader("never read"), 33<<20, false)
	_, err := br.read(w, tooLarge)
	wantAPIError(t, "a declared 33 MiB", err, http.StatusRequestEntityTooLarge, "request_too_large")
	if rest, _ := io.ReadAll(tooLarge.Body); string(rest) != "never read" {
		t.Errorf("the refused body was read: %q left", rest)
	}
}

func TestBodyTooLargeGivesBackItsMemory(t *testing.T) {
	br := newTestBodyReader(1<<20, 1<<20, 100<<10)
	_, err := br.read(httptest.NewRecorder(), xBody(context.Background(), "a", 600<<10, true))
	wantAPIError(t, "600 KiB chunked", err, http.StatusRequestEntityTooLarge, "request_too_large")
	if held := br.Budget.Held("a"); held != 0 {
		t.Fatalf("a refused body kept %d bytes of the budget", held)
	}
}

// A body of declared length ends in memory of that length, and a small
// one takes nothing from the budget.
func TestBodyOfDeclaredLength(t *testing.T) {
	const n = 700 << 10
	br := newTestBodyReader(n, n, 32<<20)
	// bytes.Reader, unlike a server's body, gives io.EOF only on the read
	// after the last byte.
	b, err := br.read(httptest.NewRecorder(), xBody(context.Background(), "a", n, false))
	if err != nil || len(b) != n || !bytes.Equal(b, bytes.Repeat([]byte("x"), n)) {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if cap(b) != n {
		t.Errorf("read into %d bytes of memory, want the declared %d", cap(b), n)
	}

	empty := newTestBodyReader(1, 1, 32<<20)
	if !(empty.Budget.Take("x", 1) == nil) {
		t.Fatal("budget")
	}
	for _, chunked := range []bool{false, true} {
		if b, err := empty.read(httptest.NewRecorder(), xBody(context.Background(), "a", 300, chunked)); err != nil || len(b) != 300 {
			t.Fatalf("chunked %v, 300 bytes with the budget spent: %d bytes, %v", chunked, len(b), err)
		}
	}
}

// A body that does not arrive within the timeout is answered 408 at the
// deadline, over a real connection, and its memory is given back then.
func TestBodyTimeout(t *testing.T) {
	br := testReader{&Reader{MaxBytes: 32 << 20, Timeout: 300 * time.Millisecond, Budget: NewBudget(1<<20, 1<<20)}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := br.Read(w, r, "slow"); err != nil {
			DropUnread(w, r)
			apierror.Write(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 64 KiB of a declared 1 MiB: memory is held while the rest is awaited.
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", 1<<20, bytes.Repeat([]byte("x"), 64<<10))
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"code":"request_timeout"`) {
		t.Fatalf("%d %s, want 408 request_timeout", resp.StatusCode, b)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("answered after %v, with a timeout of 300ms", took)
	}
	if !resp.Close {
		t.Error("the half-read connection stays open")
	}
	if held := br.Budget.Held("slow"); held != 0 {
		t.Errorf("the timed-out body still holds %d bytes", held)
	}
}

// A small body of declared length is read whole and put back as the
// ReadBody given; one whose reader gives more than it declared is still
// read to its end, as before the byte of room past the declared length.
func TestBodyReadTo(t *testing.T) {
	br := newTestBodyReader(1<<20, 1<<20, 32<<20)
	r := xBody(context.Background(), "a", 300, false)
	var rb ReadBody
	b, err := br.ReadTo(httptest.NewRecorder(), r, "a", &rb)
	if err != nil || len(b) != 300 {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if r.Body != &rb {
		t.Fatal("the body was not put back as the ReadBody given")
	}
	if again, _ := io.ReadAll(r.Body); !bytes.Equal(again, b) {
		t.Errorf("the body put back reads %d bytes, want the %d read", len(again), len(b))
	}

	r = httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(strings.Repeat("y", 500)))
	r.ContentLength = 300
	if b, err := br.ReadTo(httptest.NewRecorder(), r, "a", nil); err != nil || len(b) != 500 {
		t.Errorf("a body longer than declared: %d bytes, %v; want all 500", len(b), err)
	}
}

// A body read into buffers it outgrew, 4 KiB and each double up to its
// length, allocates about its own length once those buffers were used
// before: the next long body reuses them. Every buffer but the last is
// given back; the body itself is never reused under a request.
func TestBodyReusesTheBuffersItOutgrew(t *testing.T) {
	const n = 20_000
	// A budget no number of reads fills: a request's share comes back
	// on a goroutine of its own after it ends, which may run late.
	br := newTestBodyReader(1<<40, 1<<40, 1<<20)
	content := bytes.Repeat([]byte("x"), n)
	read := func() []byte {
		ctx, done := context.WithCancel(context.Background())
		defer done() // the request ends: its memory goes back to the budget
		r := bodyRequest(ctx, "a", bytes.NewReader(content), n, false)
		b, err := br.read(httptest.NewRecorder(), r)
		if err != nil || !bytes.Equal(b, content) {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
		return b
	}
	first := read()
	least := uint64(math.MaxUint64)
	for range 4 { // the least of a few rounds: a collection may empty the pools
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			read()
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/20)
	}
	if limit := uint64(n + n/2); least > limit && !testenv.RaceEnabled {
		t.Errorf("a body of %d allocated %d bytes a read, want at most %d", n, least, limit)
	}
	if second := read(); &second[0] == &first[0] {
		t.Error("a body the request kept was handed out again")
	}
	for size, want := range map[int64]int{4 << 10: 0, 8 << 10: 1, 1 << 20: growBufferSizes - 1, 20_000: -1, 2 << 20: -1, 2 << 10: -1} {
		if got := growBufferIndex(size); got != want {
			t.Errorf("growBufferIndex(%d) = %d, want %d", size, got, want)
		}
	}
}
