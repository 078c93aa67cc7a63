package demobackend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// shutdownGrace is how long ListenAndServe waits for in-flight answers
// after its context ends. Handlers watch the same context, so streams end
// promptly and this is only a backstop.
const shutdownGrace = 5 * time.Second

// ListenAndServe serves a Server configured by opts on addr (host:port;
// port 0 picks a free one) until ctx ends, then shuts down gracefully and
// returns nil. Once the listener is bound it calls opts.Ready with the
// base URL, or prints "demo backend listening on http://ADDR/v1" to
// standard error when Ready is nil.
func ListenAndServe(ctx context.Context, addr string, opts Options) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("demo backend: %w", err)
	}
	s := New(opts)
	base := "http://" + ln.Addr().String() + "/v1"
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if opts.Ready != nil {
		opts.Ready(base)
	} else {
		fmt.Fprintf(os.Stderr, "demo backend listening on %s\n", base)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("demo backend: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("demo backend: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("demo backend: %w", err)
	}
	return nil
}
