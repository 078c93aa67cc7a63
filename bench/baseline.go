package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
)

// captureBaselines replaces the baseline body of every /v3 scenario with
// the request the gateway really sends the backend for it: the client's
// messages plus the gateway's system prompt and tool schemas, about 9 KB.
// The backend's work grows with the body (it parses and counts the
// tokens of all of it), so a baseline without them would let the backend,
// not the gateway, decide the /v3 ratios at concurrency 32.
//
// A throwaway embedded gateway is pointed at a recording proxy in front
// of the demo backend and sent each /v3 scenario once.
func captureBaselines(o options, pin pinning, config, upAddr, tmp string) error {
	target, err := url.Parse("http://" + upAddr)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var last []byte
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			last = b
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rec}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	m := &mode{name: "capture", env: append(gatewayEnv(ln.Addr().String()),
		"SWITCHYARD_DATA_DIR="+filepath.Join(tmp, "capture"))}
	gw, err := startGateway(o, pin, m, config, tmp)
	if err != nil {
		return err
	}
	defer gw.proc.stop()
	gw.client = newClient(1)
	for i, s := range scenarios {
		if s.basePath == "" {
			continue
		}
		mu.Lock()
		last = nil
		mu.Unlock()
		if _, err := once(gw, s); err != nil {
			return fmt.Errorf("capturing the backend request of %s: %v\n%s", s.name, err, gw.proc.tail())
		}
		mu.Lock()
		body := last
		mu.Unlock()
		if body == nil {
			return fmt.Errorf("capturing the backend request of %s: the gateway sent none", s.name)
		}
		scenarios[i].baseBody = string(body)
	}
	return nil
}
