package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
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
	// token names this process's commits in their notifications
	// (commitQuery), so that the feed can tell its own.
	token string

	count atomic.Uint64
	// seq numbers this process's commits (commitQuery).
	seq atomic.Uint64
	// halfCounted are this process's commits counted once already, by
	// whichever came first of the commit's return (committedOwn) and its
	// notification (follow), which the other then leaves out: a
	// commit counted twice sent every cached key's next request to the
	// database twice, and at 32 clients each count started a herd of
	// requests reading the same key state at once. Dropping an entry
	// only makes the second arrival count again, so the map is emptied
	// when it grows (halfCountedMax) or the feed listens anew.
	mu          sync.Mutex
	halfCounted map[uint64]struct{}
	// fresh is when the last ping that arrived was sent, in nanoseconds
	// since base; 0 while the feed is not following.
	fresh atomic.Int64

	once   sync.Once // starts the feed, or, run by stop, keeps it from starting
	cancel context.CancelFunc
	done   chan struct{}
}

// halfCountedMax bounds halfCounted. Entries outlive their commit only
// when its notification never comes (the feed's connection broke, or a
// commit's error hid that it committed), so it seldom holds more than
// the commits in flight.
const halfCountedMax = 1024

func newCommitFeed(config *pgx.ConnConfig) *commitFeed {
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	return &commitFeed{
		config:      config,
		base:        time.Now(),
		token:       hex.EncodeToString(id[:]),
		halfCounted: make(map[uint64]struct{}),
		done:        make(chan struct{}),
	}
}

// commitQuery returns the COMMIT of a new write transaction of this
// process, signalling the feed with the token and the number it returns
// (driver.Begin).
func (f *commitFeed) commitQuery() (query string, seq uint64) {
	seq = f.seq.Add(1)
	return "SELECT pg_notify('" + commitsChannel + "', '" + f.token + ":" +
		strconv.FormatUint(seq, 10) + "'); COMMIT", seq
}

// ownSeq reports whether payload names a commit of this process, and
// its number.
func (f *commitFeed) ownSeq(payload string) (uint64, bool) {
	rest, ok := strings.CutPrefix(payload, f.token)
	if !ok || !strings.HasPrefix(rest, ":") {
		return 0, false
	}
	seq, err := strconv.ParseUint(rest[1:], 10, 64)
	return seq, err == nil
}

// countOnce counts commit seq of this process unless the other of its two
// signals counted it already.
func (f *commitFeed) countOnce(seq uint64) {
	f.mu.Lock()
	_, second := f.halfCounted[seq]
	if second {
		delete(f.halfCounted, seq)
	} else {
		if len(f.halfCounted) >= halfCountedMax {
			clear(f.halfCounted)
		}
		f.halfCounted[seq] = struct{}{}
	}
	f.mu.Unlock()
	if !second {
		f.count.Add(1)
	}
}

// forgetOwn drops what a failed commit of this process left: a
// notification of it counted already has nothing to pair with.
func (f *commitFeed) forgetOwn(seq uint64) {
	f.mu.Lock()
	delete(f.halfCounted, seq)
	f.mu.Unlock()
}

// forgetAllOwn empties halfCounted as the feed listens anew: the
// notifications its entries waited for went to the old connection.
func (f *commitFeed) forgetAllOwn() {
	f.mu.Lock()
	clear(f.halfCounted)
	f.mu.Unlock()
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

// committedOwn counts commit seq of this process as it returns, unless
// its notification came first.
func (f *commitFeed) committedOwn(seq uint64) { f.countOnce(seq) }

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
	f.forgetAllOwn()
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
			if seq, own := f.ownSeq(n.Payload); own {
				f.countOnce(seq)
			} else {
				f.count.Add(1)
			}
		case ctx.Err() != nil, !pgconn.Timeout(err):
			return true
		}
	}
}
