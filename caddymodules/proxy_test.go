package caddymodules

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// A small body goes upstream in the same write as the request's headers,
// one system call where reverse_proxy would make two; a large one still
// arrives whole. The upstream is reached over a SOCK_SEQPACKET socket,
// which keeps the boundaries of the writes, and a relay that counts them.
func TestSmallBodyGoesUpstreamWithItsHeaders(t *testing.T) {
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(b)
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	sock := filepath.Join(t.TempDir(), "up.sock")
	var writes atomic.Int32
	relay := packetRelay(t, sock, up.Listener.Addr().String(), &writes)
	defer relay.Close()

	rp := upstreamProxy(t, "http", "upstream", nil)
	rp["upstreams"] = []map[string]string{{"dial": "unixpacket/" + sock}}
	front := testenv.FreeAddr(t)
	caddyCfg, _ := json.Marshal(map[string]any{
		"admin": map[string]any{"disabled": true},
		"apps": map[string]any{"http": map[string]any{"servers": map[string]any{"front": map[string]any{
			"listen": []string{front},
			"routes": []any{map[string]any{"handle": []any{rp}}},
		}}}},
	})
	if err := caddy.Load(caddyCfg, true); err != nil {
		t.Fatal(err)
	}
	defer caddy.Stop()

	for _, tt := range []struct {
		size   int
		writes int32 // at most
	}{
		{size: 300, writes: 1},
		{size: 3000, writes: 1},
		{size: 64 << 10, writes: 64},
	} {
		body := bytes.Repeat([]byte("x"), tt.size)
		writes.Store(0)
		resp, err := http.Post("http://"+front+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d bytes: status %d", tt.size, resp.StatusCode)
		}
		if b, _ := got.Load().([]byte); !bytes.Equal(b, body) {
			t.Errorf("%d bytes: the upstream got %d", tt.size, len(b))
		}
		if n := writes.Load(); n > tt.writes || n == 0 {
			t.Errorf("%d bytes: sent upstream in %d writes, want 1 to %d", tt.size, n, tt.writes)
		}
	}
}

// packetRelay accepts SOCK_SEQPACKET connections on sock and relays each
// to the TCP address to, counting the packets (the writes of the peer)
// that come in.
func packetRelay(t *testing.T, sock, to string, packets *atomic.Int32) net.Listener {
	t.Helper()
	ln, err := net.Listen("unixpacket", sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			go func() {
				defer d.Close()
				buf := make([]byte, 1<<20) // larger than any packet: none is cut
				for {
					n, err := c.Read(buf)
					if err != nil || n == 0 {
						return
					}
					packets.Add(1)
					if _, err := d.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
			go func() {
				defer c.Close()
				io.Copy(c, d)
			}()
		}
	}()
	return ln
}

// A route of a method with a body must be one a meter reads: any other
// would pass upstream unbilled, so the config is refused.
func TestProxyRoutesNeedAMeter(t *testing.T) {
	for _, tt := range []struct {
		route string
		ok    bool
	}{
		{"POST /chat/completions", true},
		{"POST /embeddings", true},
		{"GET /batches", true},
		{"DELETE /models/*", true},
		{"POST /audio/transcriptions", false},
		{"POST /responses", true},
		{"POST /responses/*/cancel", false},
		{"PUT /chat/completions", false},
		{"PATCH /models/*", false},
	} {
		err := (&Proxy{Routes: []string{tt.route}}).Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.route, err, tt.ok)
		}
	}
}
