package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/storage"
)

// TestCrashReleasesHolds kills a node of a two-node deployment (PostgreSQL
// and Redis) while it relays 20 /v1 streams that together hold an
// account's whole balance and every stream slot of its four keys. Within
// the lease TTL after the kill, the surviving node sees neither the holds
// nor the slots any more: the account can again hold its whole balance and
// each key can again open revision B's five streams. The ledger stays
// consistent: the balance is the sum of its entries; and once the killed
// node has started again, no reservation is left and the mirrored
// balance is the ledger's.
//
// What is lost by design: the 20 requests in flight at the kill are never
// charged. The /v1 meter charges when a request ends, and a SIGKILLed node
// commits nothing more; this is the documented window (docs/billing.md,
// "Durability window"), bounded by what those requests had streamed.
func TestCrashReleasesHolds(t *testing.T) {
	const (
		keys           = 4
		streamsPerKey  = 5 // revision B's stream limit
		holdPerStream  = 4 // cents: a short request without max_tokens
		balance        = keys * streamsPerKey * holdPerStream
		leaseTTL       = 2 * time.Second
		expirySlack    = 3 * time.Second
		account        = "crashed"
		oneCentRequest = `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`
	)

	// Streams of about ten seconds: open well past the kill and the TTL.
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 50 * time.Millisecond})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Text(strings.Repeat("slow ", 200)), true
	})
	e := distributedEnv(t, up.URL())
	cfg := switchyardConfig(t, fmt.Sprintf("limits {\n\t\t\tlease_ttl %s\n\t\t}", leaseTTL))

	var streamKeys []string
	for range keys {
		streamKeys = append(streamKeys, newKey(t, e, account))
	}
	probe := newKey(t, e, account)
	st := openStore(t, e)
	ctx := context.Background()
	acct := accountNamed(t, st, account)
	credit(t, st, acct.ID, balance, "crash-balance")

	doomed := startGateway(t, e, cfg)
	survivor := startGateway(t, e, cfg)

	for _, key := range streamKeys {
		mustOpenStreams(t, streamsPerKey, key, doomed)
	}
	// The holds live in Redis, so the other node sees them: nothing is left.
	if status, _, body := survivor.do("POST", "/v1/chat/completions", probe, oneCentRequest); status != http.StatusPaymentRequired {
		t.Fatalf("with the whole balance held by the doomed node's streams, the survivor answered %d %s", status, body)
	}

	doomed.kill()
	killed := time.Now()
	if status, _, body := survivor.do("POST", "/v1/chat/completions", probe, oneCentRequest); status != http.StatusPaymentRequired {
		t.Fatalf("right after the kill the holds should still be there (lease_ttl %s): %d %s", leaseTTL, status, body)
	}
	if got := charges(t, e, account); len(got) != 0 {
		t.Fatalf("%d charges for the streams cut off by the kill; a killed node commits none", len(got))
	}

	// Every hold and lease was renewed last before the kill, so all have
	// expired one TTL after it, and at most a second more: Redis keeps
	// their expiries to the whole second, rounded up. The slack absorbs that
	// second and scheduling.
	time.Sleep(time.Until(killed.Add(leaseTTL)))
	deadline := killed.Add(leaseTTL + expirySlack)
	var survivorStreams []func()
	defer func() {
		for _, c := range survivorStreams {
			c()
		}
	}()
	for i := range keys * streamsPerKey {
		status, body, closeFn := openStreamBy(t, survivor, streamKeys[i%keys], deadline, 100*time.Millisecond)
		if status != http.StatusOK {
			leaked := "a hold (402: the balance still looks held)"
			if status == http.StatusTooManyRequests {
				leaked = "a stream slot (429)"
			}
			t.Fatalf("%s after the kill (lease_ttl %s), stream %d of %d (key %d) was refused: the killed node leaked %s: %s",
				time.Since(killed).Round(time.Millisecond), leaseTTL, i+1, keys*streamsPerKey, i%keys+1, leaked, body)
		}
		survivorStreams = append(survivorStreams, closeFn)
	}
	// The 20 new streams hold the whole balance again, to the cent.
	if status, _, body := survivor.do("POST", "/v1/chat/completions", probe, oneCentRequest); status != http.StatusPaymentRequired {
		t.Fatalf("with the 20 new streams holding %d cents, a 1-cent request was answered %d %s; the mirror is above the ledger's %d", balance, status, body, balance)
	}

	// The new streams' clients leave: each is charged once.
	for _, c := range survivorStreams {
		c()
	}
	var charged []storage.LedgerEntry
	for wait := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		charged = charges(t, e, account)
		if len(charged) >= len(survivorStreams) {
			break
		}
		if time.Now().After(wait) {
			t.Fatalf("%d charges for the %d streams closed on the survivor", len(charged), len(survivorStreams))
		}
	}
	if len(charged) != len(survivorStreams) {
		t.Fatalf("%d charges, want one per stream closed on the survivor (%d) and none for the killed node's", len(charged), len(survivorStreams))
	}

	final, err := st.Balance(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.Entries(ctx, acct.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sum, spent int64
	for _, le := range entries {
		sum += le.AmountCents
		if le.Kind == storage.EntryCharge {
			spent -= le.AmountCents
		}
	}
	if sum != final || entries[0].BalanceAfterCents != final || final != balance-spent {
		t.Fatalf("the ledger sums to %d and ends at %d; the balance is %d, %d cents after spending %d",
			sum, entries[0].BalanceAfterCents, final, balance, spent)
	}

	// The killed node starts again: no reservation is left, and the
	// mirror the limiter keeps in Redis is the ledger's balance.
	startGateway(t, e, cfg)
	rdb := redisClient(t, e)
	tagged := e["SWITCHYARD_REDIS_PREFIX"] + "limits:{acct:" + acct.ID + "}"
	if holds := rdb.ZRange(ctx, tagged+":holds", 0, -1).Val(); len(holds) != 0 {
		t.Errorf("holds left after the restart: %v", holds)
	}
	waitMirror(t, rdb, tagged+":balance", final, "after the restart")
}

// TestKilledNodeLosesOnlyTheChargesNotCommitted kills a node (PostgreSQL
// and Redis) while the charges of three answered requests wait in its
// ledger writer, held back by a long max_delay, and restarts it. It shows
// the durability window of docs/billing.md: the clients got their
// answers without waiting for the commit; the charges committed before
// the kill are all there; the three waiting ones, and only they, are
// lost; their holds, kept until a commit that never came, expire within
// the lease TTL; and the restarted node's sweep lowers a mirror the kill
// left above the ledger, so that mirror, ledger and balance agree.
func TestKilledNodeLosesOnlyTheChargesNotCommitted(t *testing.T) {
	const (
		account  = "window"
		batch    = 4
		queued   = 3
		leaseTTL = 2 * time.Second
	)
	up := testupstream.Start(t, demobackend.Options{})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return demobackend.Reply{Content: "Fine.", Usage: &demobackend.Usage{PromptTokens: 20_000, CompletionTokens: 1_000, TotalTokens: 21_000}}, true
	})
	e := distributedEnv(t, up.URL())
	// A batch commits when it holds four charges, or after ten minutes.
	cfg := switchyardConfig(t,
		fmt.Sprintf("limits {\n\t\t\tlease_ttl %s\n\t\t}", leaseTTL),
		fmt.Sprintf("ledger {\n\t\t\tmax_delay 10m\n\t\t\tmax_batch %d\n\t\t}", batch))
	key := fundedKey(t, e, account)
	st := openStore(t, e)
	ctx := context.Background()
	acct := accountNamed(t, st, account)
	rdb := redisClient(t, e)
	mirror := e["SWITCHYARD_REDIS_PREFIX"] + "limits:{acct:" + acct.ID + "}:balance"
	holds := e["SWITCHYARD_REDIS_PREFIX"] + "limits:{acct:" + acct.ID + "}:holds"

	g := startGateway(t, e, cfg)
	request := func(i int) {
		t.Helper()
		path := "/v1/chat/completions"
		if i%2 == 1 {
			path = "/v3/chat/completions"
		}
		start := time.Now()
		if status, _, body := g.do("POST", path, key, chatBody); status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, status, body)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("request %d took %s: the answer waited for the ledger", i, d)
		}
	}
	// Two full batches: committed at once.
	for i := range 2 * batch {
		request(i)
	}
	committed := waitCharges(t, st, acct.ID, 2*batch)
	// Three more: answered, but their batch is not full and waits.
	for i := range queued {
		request(2*batch + i)
	}
	if pending := scrape(t, g)["switchyard_ledger_pending"]; pending != queued {
		t.Fatalf("%v charges pending in the ledger writer, want %d", pending, queued)
	}
	if n := rdb.ZCard(ctx, holds).Val(); n != queued {
		t.Fatalf("%d holds in Redis, want the %d of the answered requests whose charges are not committed", n, queued)
	}

	g.kill()
	killed := time.Now()
	// Had the node died between a commit and lowering the mirror by that
	// charge, the mirror would stand above the ledger. Make it so.
	balance, err := st.Balance(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, mirror, "bal", balance+123).Err(); err != nil {
		t.Fatal(err)
	}

	// Restarted with the default max_delay (10ms), so that its own
	// charges commit within milliseconds.
	g = startGateway(t, e, switchyardConfig(t, fmt.Sprintf("limits {\n\t\t\tlease_ttl %s\n\t\t}", leaseTTL)))
	waitMirror(t, rdb, mirror, balance, "after the restart")
	// The lost charges: exactly the three that were waiting.
	if got := ledgerCharges(t, st, acct.ID); len(got) != len(committed) {
		t.Errorf("%d charges after the kill, want the %d committed before it; the %d waiting are lost", len(got), len(committed), queued)
	}
	// Their holds expire one TTL after their last renewal; Redis drops
	// the holds key a second after the last of them.
	deadline := killed.Add(leaseTTL + time.Second + 3*time.Second)
	for rdb.Exists(ctx, holds).Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s after the kill the holds of the lost charges are still there: %v",
				time.Since(killed).Round(time.Millisecond), rdb.ZRangeWithScores(ctx, holds, 0, -1).Val())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The restarted node charges again, and mirror, ledger and balance
	// agree.
	request(100)
	after := waitCharges(t, st, acct.ID, len(committed)+1)
	book := readLedger(t, st, acct.ID)
	final := book.balance
	if !book.consistent() || final != balance+after[0].AmountCents {
		t.Errorf("the ledger sums to %d and ends at %d; the balance is %d, want %d less the new charge of %d",
			book.sum, book.last, final, balance, -after[0].AmountCents)
	}
	// The mirror is lowered when the charge's hold is settled, which
	// follows the commit: it may trail the ledger by a moment.
	waitMirror(t, rdb, mirror, final, "after the restarted node's charge")
}

// waitCharges waits until the account has n charges and returns them.
func waitCharges(t *testing.T, st storage.Store, accountID string, n int) []storage.LedgerEntry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := ledgerCharges(t, st, accountID)
		if len(got) >= n {
			if len(got) > n {
				t.Fatalf("%d charges, want %d", len(got), n)
			}
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d charges after 10s, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitMirror waits for the mirrored balance at key to equal the ledger's
// balance: the start-up sweep runs in the background, and a charge lowers
// the mirror only once its commit has settled the request's hold.
func waitMirror(t *testing.T, rdb *redis.Client, key string, ledger int64, when string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := rdb.HGet(context.Background(), key, "bal").Int64()
		if err == nil && got == ledger {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s the mirrored balance is %d (%v), the ledger's %d", when, got, err, ledger)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// redisClient connects to the deployment's Redis.
func redisClient(t *testing.T, e env) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(e["SWITCHYARD_REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGracefulStopCommitsQueuedCharges stops a node (SIGTERM) while the
// charges of answered requests wait in its ledger writer: they are
// committed before the process exits.
func TestGracefulStopCommitsQueuedCharges(t *testing.T) {
	const account, requests = "leaving", 3
	_, e := scriptedEnv(t)
	key := fundedKey(t, e, account)
	g := startGateway(t, e, switchyardConfig(t, "ledger {\n\t\t\tmax_delay 10m\n\t\t}"))
	for i := range requests {
		if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, status, body)
		}
	}
	if pending := scrape(t, g)["switchyard_ledger_pending"]; pending != requests {
		t.Fatalf("%v charges pending before the stop, want %d", pending, requests)
	}
	g.stop()
	st := openStore(t, e)
	acct := accountNamed(t, st, account)
	if got := ledgerCharges(t, st, acct.ID); len(got) != requests {
		t.Fatalf("%d charges after a graceful stop, want the %d that were queued", len(got), requests)
	}
}
