package upstream

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/bodyconn"
)

// The client's own transport dials its connections as bodyconn.Conns,
// which write a body through a pooled buffer.
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
	if _, ok := c.(*bodyconn.Conn); !ok {
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
