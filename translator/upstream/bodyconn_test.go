package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// A round's body is written through bodyCopyConn's pooled buffer: it
// arrives whole, and writing it allocates nothing of its size, where a
// *net.TCPConn's own ReadFrom allocates a buffer as large as the body.
func TestBodyCopyConnWritesWithoutABufferOfItsOwn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	body := bytes.Repeat([]byte("0123456789abcdef"), 600) // 9,600 bytes
	const rounds = 50
	// Read into room made beforehand, so that the reader allocates
	// nothing while the copies are counted.
	received := make(chan []byte)
	got := make([]byte, rounds*len(body))
	go func() {
		n, _ := io.ReadFull(server, got)
		received <- got[:n]
	}()

	conn := &bodyCopyConn{client}
	copyOnce := func() {
		// As the transport hands it over: the body behind a limit of
		// its length.
		n, err := conn.ReadFrom(io.LimitReader(bytes.NewReader(body), int64(len(body))))
		if err != nil || n != int64(len(body)) {
			t.Fatalf("ReadFrom: %d bytes, %v; want %d", n, err, len(body))
		}
	}
	copyOnce() // the pool's first buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds - 1 {
		copyOnce()
	}
	runtime.ReadMemStats(&after)
	if perCopy := (after.TotalAlloc - before.TotalAlloc) / (rounds - 1); perCopy >= uint64(len(body))/2 {
		t.Errorf("a copy of %d bytes allocated %d bytes", len(body), perCopy)
	}
	if got := <-received; !bytes.Equal(got, bytes.Repeat(body, rounds)) {
		t.Errorf("the server read %d bytes, not the %d written", len(got), rounds*len(body))
	}
}

// The client's own transport dials its connections as bodyCopyConns.
func TestOwnTransportDialsBodyCopyConns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	u, err := New(Config{BaseURL: "http://" + ln.Addr().String() + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c, err := u.client.Transport.(*http.Transport).DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*bodyCopyConn); !ok {
		t.Errorf("the transport dialed a %T", c)
	}
}

// A request whose headers outgrow the transport's write buffer
// (headWriteBuffer) and whose body outgrows the pooled copy buffer
// reaches the backend whole, through the client's own transport, and an
// answer whose headers outgrow its read buffer (readBuffer) is read.
func TestLongHeadersAndBodiesPassTheTransportsBuffers(t *testing.T) {
	key := strings.Repeat("k", 3*headWriteBuffer)
	text := strings.Repeat("long text ", 5000) // 50,000 bytes, more than a copy buffer
	var gotKey string
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		gotBody, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Long", strings.Repeat("v", 3*readBuffer))
		_, _ = io.WriteString(w, eventStream(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, "[DONE]"))
	}))
	defer srv.Close()
	u, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: key, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if r := round(t.Context(), u, Request{Messages: NewConversation(Message{Role: "user", Content: text})}); r.err != nil || r.content != "ok" {
		t.Fatalf("the answer read %q, %v", r.content, r.err)
	}
	if gotKey != key {
		t.Errorf("the backend read a key of %d bytes, not the %d sent", len(gotKey), len(key))
	}
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.Unmarshal(gotBody, &body); err != nil {
		t.Fatalf("the body is not whole (%d bytes): %v", len(gotBody), err)
	}
	if n := len(body.Messages); n == 0 || body.Messages[n-1].Content != text {
		t.Errorf("the backend read %d messages, the last not the text sent", n)
	}
}
