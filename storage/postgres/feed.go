package postgres

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
)

// commitsChannel is the NOTIFY channel every write transaction of every
// Switchyard process signals on as it commits (txn.Commit).
const commitsChannel = "switchyard_commits"

const (
	// maxFeedLag bounds how far behind the database a Revision may be: a
	// commit older than this has reached the feed, or Revision reports
	// false and every read goes to the database again.
	maxFeedLag = 250 * time.Millisecond
	// feedPingEvery is how often the feed proves how far it has read.
	feedPingEvery = 50 * time.Millisecond
)

// commitFeed follows the notifications of commitsChannel on a connection
// of its own, so that Revision can tell without a query whether anything
// was committed since a read, by any process on any node.
//
// PostgreSQL delivers notifications to a listener in commit order, one
// queue for every channel. So the feed pings itself on a channel of its
// own (its connection's backend pid in the name): when the ping arrives,
// every commit made before it was sent has been counted. Revision answers
// only while the last ping that arrived was sent less than maxFeedLag ago,
// which bounds how stale a revision can be; in practice a notification
// arrives well under a millisecond after its commit. Commits of this
// process also count as they return, so that this node sees its own
// writes at once.
//
// The count never starts over: a new connection raises it once, so that
// no revision read on a connection that broke (and may have missed
// notifications) names a state after it.
type commitFeed struct {
	config *pgx.ConnConfig
	base   time.Time // fresh is measured from it, on the monotonic clock

	count atomic.Uint64
	// fresh is when the last ping that arrived was sent, in nanoseconds
	// since base; 0 while the feed is not following.
	fresh atomic.Int64

	once   sync.Once // starts the feed, or, run by stop, keeps it from starting
	cancel context.CancelFunc
	done   chan struct{}
}

func newCommitFeed(config *pgx.ConnConfig) *commitFeed {
	return &commitFeed{config: config, base: time.Now(), done: make(chan struct{})}
}

// revision starts the feed on its first call: processes that never ask,
// the CLI's, hold no listening connection.
func (f *commitFeed) revision() (storage.Revision, bool) {
	f.once.Do(f.start)
	fresh := f.fresh.Load()
	if fresh == 0 || time.Since(f.base)-time.Duration(fresh) > maxFeedLag {
		return storage.Revision{}, false
	}
	return storage.NewRevision(0, f.count.Load()), true
}

func (f *commitFeed) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go f.run(ctx)
}

// committed counts a commit of this process.
func (f *commitFeed) committed() { f.count.Add(1) }

// stop ends the feed and waits for it.
func (f *commitFeed) stop() {
	f.once.Do(func() {}) // a later revision call starts nothing
	if f.cancel != nil {
		f.cancel()
		<-f.done
	}
}

// feedGoroutine names the feed as internal/guard counts its panics.
var feedGoroutine = guard.Name("postgres_commit_feed")

func (f *commitFeed) run(ctx context.Context) {
	defer close(f.done)
	backoff := 100 * time.Millisecond
	for {
		// A follow that panicked is one that failed: the feed reports
		// nothing while it is down (follow's deferred calls ran), and
		// comes back after the backoff, rather than leaving every key
		// lookup of the node to read the database for good.
		listened := false
		if guard.Run(feedGoroutine, func() { listened = f.follow(ctx) }) == nil && listened {
			backoff = 100 * time.Millisecond
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// follow connects, listens and counts until the connection fails, a ping
// does not come back within maxFeedLag, or ctx is done. It reports
// whether it got as far as listening.
func (f *commitFeed) follow(ctx context.Context) bool {
	conn, err := pgx.ConnectConfig(ctx, f.config)
	if err != nil {
		return false
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(closeCtx)
	}()
	pings := "switchyard_feed_" + strconv.FormatUint(uint64(conn.PgConn().PID()), 10)
	if _, err := conn.Exec(ctx, "LISTEN "+commitsChannel+"; LISTEN "+pings); err != nil {
		return false
	}
	f.count.Add(1)
	defer f.fresh.Store(0)

	// The waits are bounded by the connection's deadline, not by a
	// context each: a context.WithTimeout, and pgx's watch of it, were
	// ten allocations a notification (BenchmarkCommitFeed), and one
	// comes with every commit of every node. ctx's end cuts a wait the
	// same way.
	netConn := conn.PgConn().Conn()
	defer context.AfterFunc(ctx, func() { netConn.SetDeadline(time.Now()) })()

	var seq uint64
	var sent, next time.Time // sent: of ping seq, zero once it arrived
	for {
		now := time.Now()
		if sent.IsZero() && !now.Before(next) {
			seq++
			sent = now
			feedPings.Add(1)
			netConn.SetDeadline(time.Time{}) // the last wait's
			if _, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", pings, strconv.FormatUint(seq, 10)); err != nil {
				return true
			}
		}
		deadline := next
		if !sent.IsZero() {
			if now.Sub(sent) > maxFeedLag {
				return true // the connection or the server is stuck
			}
			deadline = sent.Add(maxFeedLag)
		}
		netConn.SetDeadline(now.Add(max(deadline.Sub(now), time.Millisecond)))
		if ctx.Err() != nil {
			return true // it ended before this deadline replaced the one its end set
		}
		n, err := conn.WaitForNotification(context.Background())
		switch {
		case err == nil && n.Channel == pings:
			if n.Payload == strconv.FormatUint(seq, 10) {
				f.fresh.Store(int64(sent.Sub(f.base)))
				next, sent = sent.Add(feedPingEvery), time.Time{}
			}
		case err == nil:
			f.committed()
		case ctx.Err() != nil, !pgconn.Timeout(err):
			return true
		}
	}
}
