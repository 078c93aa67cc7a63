package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchyardhq/switchyard/storage"
)

const (
	// pingInterval is how long the listening connection may stay silent
	// before WatchKeys checks that it is still alive. A connection that
	// died without a word (a dropped route, a failed-over server) would
	// otherwise leave the sink believing it is live.
	pingInterval = 30 * time.Second
	pingTimeout  = 5 * time.Second
)

// WatchKeys listens on its own connection (not one of the pool's) for the
// notifications that RevokeKey and DeleteAccount send when they commit,
// and reconnects with capped exponential backoff when the connection
// breaks. It returns when ctx is done or the store is closed.
func (s *Store) WatchKeys(ctx context.Context, sink storage.KeySink) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.watchers.Add(1)
	s.mu.Unlock()
	defer s.watchers.Done()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()

	backoff := s.minBackoff
	for {
		if s.listen(ctx, sink) {
			backoff = s.minBackoff
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, s.maxBackoff)
	}
}

// listen connects, LISTENs and relays notifications to sink until the
// connection fails or ctx is done. It reports whether it got as far as
// listening, having then told sink Live(true) and, on the way out,
// Live(false).
func (s *Store) listen(ctx context.Context, sink storage.KeySink) (listened bool) {
	conn, err := pgx.ConnectConfig(ctx, s.listenConfig)
	if err != nil {
		return false
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+keysChannel); err != nil {
		return false
	}
	sink.Live(true)
	defer sink.Live(false)
	for {
		waitCtx, cancel := context.WithTimeout(ctx, pingInterval)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			sink.Revoked(n.Payload)
			continue
		case ctx.Err() != nil, !pgconn.Timeout(err):
			return true
		}
		pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(pingCtx)
		cancel()
		if err != nil {
			return true
		}
	}
}
