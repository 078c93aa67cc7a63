package postgres

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/internal/testenv"
)

// TestFeedSurvivesAPanic: a panic while the commit feed connects (here
// in its dialer; in production, anywhere in the driver) is recovered and
// counted, and the feed connects again and goes live.
func TestFeedSurvivesAPanic(t *testing.T) {
	cfg, err := pgx.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			panic("driver bug")
		}
		return dial(ctx, network, addr)
	}
	before := guard.Count(feedGoroutine)
	f := newCommitFeed(cfg)
	defer f.stop()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := f.revision(); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the feed is not live 10s after a panic (%d dials)", dials.Load())
		}
	}
	if n := guard.Count(feedGoroutine) - before; n != 1 || dials.Load() < 2 {
		t.Errorf("%d panics counted over %d dials; want 1, then a dial that worked", n, dials.Load())
	}
}
