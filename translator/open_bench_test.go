package translator

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// BenchmarkOpenStream is what a /v3 stream allocates while it opens:
// from the parse of its body (Limits.Strict, as the gateway's admission
// parses it) until its first round has reached the backend, where an
// idle stream waits for the first byte. Garbage made then stays resident
// in a process that holds many idle streams (docs/performance.md,
// "Memory of an idle stream"). The backend is a bare TCP listener that
// reads one request at a time into a buffer of its own and answers
// nothing, so the figure is the parse's, the orchestrator's, its
// upstream client's and net/http's, and the connection's accept (a few
// hundred bytes); what the stream allocates as it is torn down is not
// in it. B/stream and allocs/stream are read from the runtime's counts
// around each stream.
func BenchmarkOpenStream(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	received := make(chan struct{})
	go silentBackend(ln, received)

	up, err := upstream.New(upstream.Config{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "backend-model"})
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	o, prof := benchOrchestrator(b, up)
	body := []byte(chatBody(true, "Hold on.", ""))
	lim := request.Limits{Profile: prof, Strict: true}
	caller := Caller{AccountID: "acct1", KeyID: "key1", RequestID: "req1"}

	var bytesSum, allocsSum uint64
	var before, after runtime.MemStats
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequest(http.MethodPost, "/v3/chat/completions", nil).WithContext(ctx)
		w := &discardFlusher{h: http.Header{}}
		served := make(chan struct{})
		runtime.ReadMemStats(&before)
		go func() {
			defer close(served)
			req, err := request.Parse(body, r.Header, lim)
			if err != nil {
				b.Error(err)
				return
			}
			o.Serve(w, r, req, caller)
		}()
		<-received
		runtime.ReadMemStats(&after)
		bytesSum += after.TotalAlloc - before.TotalAlloc
		allocsSum += after.Mallocs - before.Mallocs
		cancel()
		<-served
	}
	b.ReportMetric(float64(bytesSum)/float64(b.N), "B/stream")
	b.ReportMetric(float64(allocsSum)/float64(b.N), "allocs/stream")
}

// silentBackend serves ln one connection at a time: it reads a request
// whole, tells received, and reads on until the client closes the
// connection, answering nothing.
func silentBackend(ln net.Listener, received chan<- struct{}) {
	buf := make([]byte, 64<<10)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		n, told := 0, false
		for {
			m, err := c.Read(buf[n:])
			if err != nil {
				break
			}
			if n += m; n == len(buf) {
				n = 0 // past the request: only the close is awaited
			}
			if !told && requestRead(buf[:n]) {
				told = true
				received <- struct{}{}
			}
		}
		c.Close()
	}
}

// requestRead reports whether b holds an HTTP/1.1 request's headers and
// as much body as its Content-Length says, without allocating: the
// backend's reads are counted with the stream's.
func requestRead(b []byte) bool {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return false
	}
	head := b[:end]
	for len(head) > 0 {
		line, rest, _ := bytes.Cut(head, []byte("\r\n"))
		head = rest
		name, value, _ := bytes.Cut(line, []byte(":"))
		if bytes.EqualFold(name, []byte("Content-Length")) {
			n := 0
			for _, c := range bytes.TrimSpace(value) {
				n = 10*n + int(c-'0')
			}
			return len(b)-end-4 >= n
		}
	}
	return true
}
