package e2e

// The billing invariant, fuzzed at the HTTP level. The real gateway runs
// in front of a scripted upstream that counts every completion it serves
// (internal/testupstream, Served); batches of generated requests
// (invariant_gen_test.go) go to /v1 and /v3 at once, with operator
// top-ups, account-token top-ups and key revocations racing them. After
// every batch:
//
//   - every completion the upstream served is charged once, to the key
//     that asked for it: exactly the documented price of the usage it
//     reported (docs/billing.md: half-up rounding of the sum, minimum 1
//     cent, revision B's cap of 500), or an estimate within the minimum
//     and the cap where the usage never reached the gateway (the client
//     left, the answer was cut); nothing else is charged, and a request
//     the backend never answered is charged only an estimate, and only
//     when its client left;
//   - the ledger holds exactly those charges, credits only what the
//     operator put in, adds up, and no balance is below its documented
//     floor (the sum, over its charges, of what each exceeds the smallest
//     hold: zero for the accounts whose answers cost the minimum);
//   - no hold is left (the admin API's reserved_cents, and Redis), no
//     stream slot is left (all of a key's slots can be taken, and one
//     more is refused), and no key ever had more streams at the backend
//     at once than its limit;
//   - the gateway process never exited.
//
// A violation names its class and prints the request as curl, cut down
// to the mutations that still show it when a replay alone shows it.
//
// Runs: TestBillingInvariant, on SQLite and on PostgreSQL + Redis, a few
// batches of a fixed seed and of one drawn from the clock (make test);
// INVARIANT_DURATION=1h for a long run of each (make fuzz);
// INVARIANT_SEED=N [INVARIANT_BATCH=B] to replay; INVARIANT_MODES=sqlite
// or postgres for one storage mode.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// The documented prices of revision B at the defaults (docs/billing.md),
// written out here rather than read from policy, so that the gateway's
// own arithmetic is checked against the documentation, not against
// itself.
const (
	docInputCentsPerMTok  = 300
	docOutputCentsPerMTok = 1000
	docMinChargeCents     = 1
	docMaxChargeCents     = 500
)

// documentedPrice is the charge docs/billing.md gives for prompt and
// completion tokens: negative counts as zero, the sum rounded half up
// once, at least the minimum, at most the cap.
func documentedPrice(prompt, completion int64) int64 {
	micro := new(big.Int).Mul(big.NewInt(max(prompt, 0)), big.NewInt(docInputCentsPerMTok))
	micro.Add(micro, new(big.Int).Mul(big.NewInt(max(completion, 0)), big.NewInt(docOutputCentsPerMTok)))
	micro.Add(micro, big.NewInt(500_000))
	cents := micro.Div(micro, big.NewInt(1_000_000))
	if !cents.IsInt64() {
		return docMaxChargeCents
	}
	return min(max(cents.Int64(), docMinChargeCents), docMaxChargeCents)
}

func TestDocumentedPrice(t *testing.T) {
	// The table of docs/billing.md, "Rounding".
	for _, tc := range []struct{ prompt, completion, want int64 }{
		{0, 0, 1}, {1_000, 200, 1}, {4_999, 0, 1}, {5_000, 0, 2}, {1_000, 1_200, 2},
		{12_345, 678, 4}, {1_665_000, 0, 500}, {1_000_000_000, 0, 500}, {-5, -5, 1}, {1 << 62, 1 << 62, 500},
	} {
		if got := documentedPrice(tc.prompt, tc.completion); got != tc.want {
			t.Errorf("documentedPrice(%d, %d) = %d, want %d", tc.prompt, tc.completion, got, tc.want)
		}
	}
}

// invariantStreams is revision B's concurrent streams per key.
var invariantStreams = policy.ProfileFor(policy.RevisionB).ConcurrentStreams

// nonceRE finds a request's nonce in a model name or a message.
var nonceRE = regexp.MustCompile(`fz[a-z0-9]+b[0-9]+(?:[rpx][0-9]+)+`)

type fuzzAccount struct {
	name     string
	id       string
	thrifty  bool
	keys     []*fuzzKey
	credited int64 // cents the harness credited: the opening adjustment and the top-ups answered 201
	token    string
}

type fuzzKey struct {
	id, key string
	acct    *fuzzAccount
	revoked atomic.Bool // a revocation was asked for
}

// fuzzOp is an admin action racing a batch.
type fuzzOp struct {
	kind  string // "topup", "self-topup", "revoke"
	at    time.Duration
	acct  *fuzzAccount
	key   *fuzzKey
	cents int64
	ref   string
	// replayOf is the earlier top-up whose reference this one repeats.
	replayOf *fuzzOp
	status   int
	body     string
}

func (op *fuzzOp) String() string {
	switch op.kind {
	case "revoke":
		return fmt.Sprintf("revoke key %s of %s at +%s", op.key.id, op.acct.name, op.at)
	default:
		return fmt.Sprintf("%s of %d cents to %s, reference %q, at +%s: %d %s", op.kind, op.cents, op.acct.name, op.ref, op.at, op.status, strings.TrimSpace(op.body))
	}
}

// invariantRun is one gateway deployment under the generator.
type invariantRun struct {
	t        *testing.T
	mode     string
	e        env
	cfg      string
	g        *gateway
	up       *testupstream.Server
	inflight *atomic.Int64 // upstream handlers running
	st       storage.Store
	secret   []byte
	operator string
	client   *http.Client

	reqs   sync.Map // nonce → *fuzzReq
	replay *fuzzAccount
	seq    atomic.Int64

	mu       sync.Mutex
	reported map[string]bool           // nonce and class of each finding reported
	shapes   map[string]map[string]int // findings about requests by class and shape
	counts   map[string]int
	shown    map[string]int
	examples map[string]string
	seedNote string
}

func TestBillingInvariant(t *testing.T) {
	modes := os.Getenv("INVARIANT_MODES")
	for _, mode := range []string{"sqlite", "postgres"} {
		if modes != "" && !slices.Contains(strings.Split(modes, ","), mode) {
			continue
		}
		name := map[string]string{"sqlite": "sqlite", "postgres": "postgres and redis"}[mode]
		t.Run(name, func(t *testing.T) { runInvariant(t, mode) })
	}
}

func runInvariant(t *testing.T, mode string) {
	r := startInvariant(t, mode)
	long, err := time.ParseDuration(os.Getenv("INVARIANT_DURATION"))
	if os.Getenv("INVARIANT_DURATION") != "" && err != nil {
		t.Fatalf("INVARIANT_DURATION: %v", err)
	}
	switch seed := os.Getenv("INVARIANT_SEED"); {
	case seed != "":
		s, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			t.Fatalf("INVARIANT_SEED: %v", err)
		}
		if b := os.Getenv("INVARIANT_BATCH"); b != "" {
			n, err := strconv.Atoi(b)
			if err != nil {
				t.Fatalf("INVARIANT_BATCH: %v", err)
			}
			r.batch(s, n, 24)
		} else {
			r.batches(s, 4, 0)
		}
	case long > 0:
		seed := uint64(time.Now().UnixNano())
		r.batches(seed, 1<<30, long)
	default:
		// A fixed seed, the same every run, and one from the clock, so
		// that each run tries something new; both are printed on failure.
		r.batches(1, 3, 0)
		r.batches(uint64(time.Now().UnixNano()), 3, 0)
	}
	r.summary()
}

// startInvariant starts the upstream, the gateway and the operator's
// means for mode.
func startInvariant(t *testing.T, mode string) *invariantRun {
	r := &invariantRun{t: t, mode: mode, counts: map[string]int{}, reported: map[string]bool{}, shapes: map[string]map[string]int{}, shown: map[string]int{}, examples: map[string]string{},
		client: &http.Client{Timeout: 30 * time.Second}}
	var upURL string
	r.up, upURL, r.inflight = countedUpstream(t, demobackend.Options{InterTokenDelay: 4 * time.Millisecond})
	r.up.Respond(r.respond)
	if mode == "postgres" {
		r.e = distributedEnv(t, upURL)
	} else {
		r.e = embeddedEnv(t, upURL)
	}
	r.secret = []byte(strings.Repeat("j", 40))
	r.e = r.e.with("SWITCHYARD_ADMIN_JWT_SECRET", string(r.secret))
	// The rate limits and the failed-authentication guard are not under
	// test and would refuse the bursts; a slow Redis on a loaded machine
	// must not turn into the documented fail_open overspend.
	// The operator's own admin API calls (top-ups, revocations, reads of
	// balances and holds) come faster than its rate limits allow.
	r.cfg = writeConfig(t, exampleConfig(t,
		"\tswitchyard {", "\tswitchyard {\n\t\tlimits {\n\t\t\trequests 1000000 1m\n\t\t\tauth_failures off\n\t\t\tredis_timeout 2s\n\t\t}",
		"\t\tswitchyard_admin\n", "\t\tswitchyard_admin {\n\t\t\trate_limit off\n\t\t\taddress_rate_limit off\n\t\t}\n"))
	r.g = startGateway(t, r.e, r.cfg)
	r.g.logTail = 64 << 10
	r.st = openStore(t, r.e)
	var err error
	if r.operator, err = admin.Mint(admin.MintConfig{Secret: r.secret, Subject: "invariant", Operator: true, TTL: 48 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	r.replay = r.account("fzreplay"+strconv.Itoa(int(time.Now().UnixNano()%1e6)), false, 1)
	r.credit(r.replay, 10_000_000)
	return r
}

// countedUpstream is a scripted upstream whose running handlers are
// counted, so that a batch can wait until the backend is idle. It
// returns the server, its base URL and the count.
func countedUpstream(t *testing.T, opts demobackend.Options) (*testupstream.Server, string, *atomic.Int64) {
	up := testupstream.New(opts)
	n := new(atomic.Int64)
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		defer n.Add(-1)
		up.ServeHTTP(w, r)
	}))
	ts.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	ts.Start()
	t.Cleanup(func() { cancel(); ts.Close() })
	return up, ts.URL + "/v1", n
}

// respond answers each upstream call as the plan of the request whose
// nonce it carries says.
func (r *invariantRun) respond(req *demobackend.Request) (demobackend.Reply, bool) {
	q := r.lookup(req)
	if q == nil {
		return testupstream.Text("unplanned"), true
	}
	p := q.reply
	switch {
	case p.hang:
		return demobackend.Reply{Delay: time.Hour}, true
	case p.status != 0:
		return testupstream.Error(p.status, ""), true
	}
	return demobackend.Reply{
		Content:    strings.Repeat(" word", p.words),
		Usage:      &demobackend.Usage{PromptTokens: p.prompt, CompletionTokens: p.completion, TotalTokens: p.prompt + p.completion},
		BreakAfter: p.breakAfter,
		Delay:      p.delay,
		EarlyHints: p.earlyHints,
	}, true
}

// nonceOf is the nonce a request to the upstream carries, in its model
// (/v1) or its messages (/v3, whose upstream model is the backend's).
func nonceOf(req *demobackend.Request) string {
	if req.Chat != nil {
		if n := nonceRE.FindString(req.Chat.Model); n != "" {
			return n
		}
		for _, m := range req.Chat.Messages {
			if n := nonceRE.FindString(m.Text()); n != "" {
				return n
			}
		}
	}
	return nonceRE.FindString(string(req.Body))
}

func (r *invariantRun) lookup(req *demobackend.Request) *fuzzReq {
	if q, ok := r.reqs.Load(nonceOf(req)); ok {
		return q.(*fuzzReq)
	}
	return nil
}

// batches runs batches of seed, n at most, for at most d (0: no bound).
func (r *invariantRun) batches(seed uint64, n int, d time.Duration) {
	began := time.Now()
	for b := range n {
		if d > 0 && time.Since(began) > d {
			break
		}
		size := 24
		if d > 0 {
			size = 10 + int(rand.New(rand.NewPCG(seed, uint64(b)^0x5eed)).IntN(40))
		}
		r.batch(seed, b, size)
	}
	r.t.Logf("%s: seed %d, %s", r.mode, seed, time.Since(began).Round(time.Millisecond))
}

// tag is the seed's part of every name and nonce of its batches.
func tag(seed uint64) string { return strconv.FormatUint(seed%(1<<40), 36) }

// batch generates batch b of seed, runs it and checks the invariant.
func (r *invariantRun) batch(seed uint64, b, size int) {
	t := r.t
	rng := rand.New(rand.NewPCG(seed, uint64(b)))
	g := gen{rng}
	r.mu.Lock()
	r.seedNote = fmt.Sprintf("INVARIANT_SEED=%d INVARIANT_BATCH=%d INVARIANT_MODES=%s", seed, b, r.mode)
	before := r.total()
	r.mu.Unlock()

	// A process that ended after the last batch's checks is reported now.
	r.exited(b-1, nil, nil)
	var accts []*fuzzAccount
	for i := range 1 + rng.IntN(2) {
		thrifty := g.chance(0.3)
		a := r.account(fmt.Sprintf("fz%sb%da%d", tag(seed), b, i), thrifty, 1+rng.IntN(2))
		if thrifty {
			r.credit(a, int64(2+rng.IntN(12)))
		} else {
			r.credit(a, 200_000)
		}
		accts = append(accts, a)
	}
	var reqs []*fuzzReq
	for i := range size {
		a := accts[rng.IntN(len(accts))]
		route := "v1"
		if g.chance(0.4) {
			route = "v3"
		}
		q := g.request(fmt.Sprintf("fz%sb%dr%d", tag(seed), b, i), route, a.thrifty)
		q.acct, q.key = a, a.keys[rng.IntN(len(a.keys))]
		if !g.chance(0.5) {
			q.start = time.Duration(rng.IntN(400)) * time.Millisecond
		}
		reqs = append(reqs, q)
	}
	// A burst: one shape of stream, many times at once on one key of a
	// rich account, read to the end, so that a shape admitted without a
	// stream slot shows as more streams at the backend than the limit.
	if rich := slices.IndexFunc(accts, func(a *fuzzAccount) bool { return !a.thrifty }); rich >= 0 && g.chance(0.35) {
		a := accts[rich]
		shape := reqs[rng.IntN(len(reqs))]
		k := a.keys[rng.IntN(len(a.keys))]
		for i := range invariantStreams + 2 + rng.IntN(6) {
			q := *shape
			q.nonce = fmt.Sprintf("fz%sb%dr%d", tag(seed), b, size+i)
			q.reqID, q.acct, q.key, q.start = "fzq-"+q.nonce, a, k, 0
			q.stream, q.cut = true, clientCut{}
			q.reply = replyPlan{words: 60 + rng.IntN(40), prompt: rng.IntN(50_000), completion: rng.IntN(5_000)}
			reqs = append(reqs, &q)
		}
	}
	for _, q := range reqs {
		r.reqs.Store(q.nonce, q)
	}
	ops := r.racingOps(g, accts, reqs)

	var wg sync.WaitGroup
	base := r.g.base
	addr := strings.TrimPrefix(base, "http://")
	for _, q := range reqs {
		wg.Go(func() {
			time.Sleep(q.start)
			q.outcome = q.send(addr)
		})
	}
	for _, op := range ops {
		wg.Go(func() {
			time.Sleep(op.at)
			r.perform(op)
		})
	}
	wg.Wait()

	if r.exited(b, reqs, ops) {
		return
	}
	r.settle(accts...)
	if r.exited(b, reqs, ops) {
		return
	}
	served := r.servedBy()
	r.checkOps(ops)
	r.checkRequests(reqs, served, base)
	r.checkStreams(reqs, served, base)
	for _, a := range accts {
		r.checkAccount(a, reqs)
	}
	if r.exited(b, reqs, ops) {
		return
	}
	// Every slot of every live key can be taken, and no more.
	var probes []*fuzzReq
	for _, a := range accts {
		if a.thrifty {
			// The probes' holds, through the gateway: a credit another
			// process posts reaches a PostgreSQL node's key cache by
			// notification, up to 250 ms later (docs/configuration.md).
			r.topUp(a, 500)
		}
		for _, k := range a.keys {
			if !k.revoked.Load() {
				probes = append(probes, r.probeSlots(k, fmt.Sprintf("fz%sb%dp%d", tag(seed), b, len(probes)))...)
			}
		}
	}
	if r.exited(b, append(reqs, probes...), ops) {
		return
	}
	r.settle(accts...)
	if r.exited(b, append(reqs, probes...), ops) {
		return
	}
	served = r.servedBy()
	r.checkRequests(append(reqs, probes...), served, base)
	for _, a := range accts {
		r.checkAccount(a, append(reqs, probes...))
	}
	r.checkLeftovers(append(reqs, probes...))
	if r.exited(b, append(reqs, probes...), ops) {
		return
	}
	r.mu.Lock()
	failed := r.total() > before
	r.mu.Unlock()
	if failed {
		t.Logf("batch %d of seed %d: %d requests, %d admin actions; replay with %s", b, seed, len(reqs), len(ops), r.seedNote)
	}
	for _, q := range append(reqs, probes...) {
		r.reqs.Delete(q.nonce)
	}
	// The upstream's records of this batch have been read.
	r.up.Reset()
	r.up.Respond(r.respond)
}

// racingOps draws the admin actions that race a batch: operator top-ups
// (fresh references, a reference repeated with the same or another
// amount, references in the charges' namespace), top-ups an account's
// own token asks for, and key revocations.
func (r *invariantRun) racingOps(g gen, accts []*fuzzAccount, reqs []*fuzzReq) []*fuzzOp {
	var ops []*fuzzOp
	at := func() time.Duration { return time.Duration(g.rng.IntN(450)) * time.Millisecond }
	for _, a := range accts {
		if a.thrifty {
			// Credits would move the floor of an account that is meant to
			// be spent to the last cent; a revocation does not.
			if g.chance(0.25) {
				ops = append(ops, &fuzzOp{kind: "revoke", at: at(), acct: a, key: a.keys[g.rng.IntN(len(a.keys))]})
			}
			continue
		}
		for range g.rng.IntN(4) {
			op := &fuzzOp{kind: "topup", at: at(), acct: a, cents: int64(500 + g.rng.IntN(99_501))}
			switch k := g.rng.IntN(6); {
			case k == 0 && len(reqs) > 0:
				op.ref = "req:" + reqs[g.rng.IntN(len(reqs))].reqID
			case k == 1:
				op.ref = "req:" + policy.NewChargeID()
			default:
				op.ref = fmt.Sprintf("fzref-%s-%d", a.name, len(ops))
			}
			ops = append(ops, op)
			if g.chance(0.3) {
				again := *op
				again.at, again.replayOf = at(), op
				if g.chance(0.5) {
					again.cents += int64(1 + g.rng.IntN(100))
				}
				ops = append(ops, &again)
			}
		}
		if g.chance(0.2) {
			ops = append(ops, &fuzzOp{kind: "self-topup", at: at(), acct: a, cents: int64(500 + g.rng.IntN(99_501)),
				ref: fmt.Sprintf("fzself-%s-%d", a.name, len(ops))})
		}
		if g.chance(0.25) {
			ops = append(ops, &fuzzOp{kind: "revoke", at: at(), acct: a, key: a.keys[g.rng.IntN(len(a.keys))]})
		}
	}
	return ops
}

func (r *invariantRun) perform(op *fuzzOp) {
	switch op.kind {
	case "revoke":
		op.key.revoked.Store(true)
		op.status, op.body = r.admin("DELETE", "/admin/accounts/"+op.acct.name+"/keys/"+op.key.id, r.operator, "")
	case "topup", "self-topup":
		token := r.operator
		if op.kind == "self-topup" {
			token = op.acct.token
		}
		body := fmt.Sprintf(`{"cents":%d,"reference":%q}`, op.cents, op.ref)
		op.status, op.body = r.admin("POST", "/admin/accounts/"+op.acct.name+"/topups", token, body)
	}
}

// checkOps: what the admin API answered the racing actions, and the
// credits it accepted.
func (r *invariantRun) checkOps(ops []*fuzzOp) {
	for _, op := range ops {
		switch {
		case op.kind == "self-topup" && op.status/100 == 2:
			r.violate("an account's own token credits its balance without payment", op.String(), "")
		case op.kind == "topup" && op.status == http.StatusOK && op.replayOf != nil && op.cents != op.replayOf.cents:
			r.violate("a top-up reference repeated with another amount is answered 200", op.String()+"; first: "+op.replayOf.String(), "")
		case op.kind == "revoke" && op.status != http.StatusOK:
			r.violate("the operator could not revoke a key", op.String(), "")
		}
		if (op.kind == "topup" || op.kind == "self-topup") && op.status == http.StatusCreated {
			op.acct.credited += op.cents
		}
	}
}

// dead reports whether the gateway process has ended.
func (r *invariantRun) dead() bool {
	select {
	case <-r.g.done:
		return true
	default:
		return false
	}
}

// exited reports whether the gateway process has ended, as a violation,
// and starts another in its place so that the run goes on.
func (r *invariantRun) exited(b int, reqs []*fuzzReq, ops []*fuzzOp) bool {
	if !r.dead() {
		return false
	}
	log := r.g.log.String()
	if i := strings.LastIndex(log, "panic"); i >= 0 {
		log = log[max(0, i-2000):min(len(log), i+6000)]
	} else {
		log = log[max(0, len(log)-4000):]
	}
	var what []string
	for _, op := range ops {
		what = append(what, op.String())
	}
	r.restart()
	// The reproductions go to the gateway started in its place.
	var repro []string
	for _, q := range reqs {
		if q.outcome.err != "" && len(repro) < 6 {
			repro = append(repro, q.curl(r.g.base))
		}
	}
	r.mu.Lock()
	exits := r.counts["the gateway process exited"]
	r.mu.Unlock()
	// The first few exits are cut down; later ones most likely repeat them.
	var alone *fuzzReq
	if exits < 3 {
		alone = r.isolateExit(reqs)
	}
	switch {
	case alone != nil:
		repro = []string{"# alone, this request ends the process:", alone.curl(r.g.base)}
	case exits >= 3:
		repro = append([]string{"# not cut down (the run's first exits were); the batch's requests the exit cut off:"}, repro...)
	default:
		repro = append([]string{"# no request of the batch ends the process alone; the batch's requests the exit cut off:"}, repro...)
	}
	r.violate("the gateway process exited", fmt.Sprintf("in or just after batch %d (%s)\nadmin actions: %s\nlog:\n%s", b, r.seedNote, strings.Join(what, "\n  "), log),
		strings.Join(repro, "\n"))
	return true
}

// restart starts a gateway in place of one that exited.
func (r *invariantRun) restart() {
	running.remove(r.g)
	r.g = startGateway(r.t, r.e, r.cfg)
	r.g.logTail = 64 << 10
	r.up.Reset()
	r.up.Respond(r.respond)
}

// isolateExit replays the requests of a batch that ended the process one
// at a time, those with unusual usage first, and returns the first that
// ends it alone, cut down; nil when none does within a dozen tries.
func (r *invariantRun) isolateExit(reqs []*fuzzReq) *fuzzReq {
	ends := func(c *fuzzReq) bool {
		r.replayAlone(c)
		r.reqs.Delete(c.nonce)
		select {
		case <-r.g.done:
		case <-time.After(500 * time.Millisecond):
			return false
		}
		r.restart()
		return true
	}
	order := slices.Clone(reqs)
	sort.SliceStable(order, func(i, j int) bool { return order[i].reply.usage > order[j].reply.usage })
	return r.isolate(order, ends)
}

// settle waits until the gateway is done with the accounts' requests:
// the backend idle, every charge handed to the ledger writer committed,
// and no hold left. Every request that can be charged holds at least the
// minimum until its handlers return, or its charge commits: a request
// still running shows as a hold (a client that left may keep its request
// running for a while: the gateway notices when it next writes). Past
// the deadline it returns, and checkAccount reports what is left.
func (r *invariantRun) settle(accts ...*fuzzAccount) {
	deadline := time.Now().Add(12 * time.Second)
	for idle := 0; idle < 3 && time.Now().Before(deadline); {
		quiet := r.inflight.Load() == 0 && r.ledgerPending() == 0
		for _, a := range accts {
			n, err := r.reserved(a)
			if err != nil {
				return // the gateway is gone: the caller's exit check tells
			}
			quiet = quiet && n == 0
		}
		if quiet {
			idle++
		} else {
			idle = 0
		}
		time.Sleep(15 * time.Millisecond)
	}
}

func (r *invariantRun) ledgerPending() float64 {
	resp, err := http.Get("http://" + r.g.admin + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "switchyard_ledger_pending "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// servedBy groups what the upstream served and received by nonce.
func (r *invariantRun) servedBy() map[string][]demobackend.Served {
	out := map[string][]demobackend.Served{}
	for _, sv := range r.up.Served() {
		n := nonceOf(&sv.Request)
		out[n] = append(out[n], sv)
	}
	return out
}

// attribution is the usage records of the accounts of some requests,
// each given to the request it charges.
type attribution struct {
	recs    map[string][]storage.UsageRecord // by nonce
	renamed map[string]storage.UsageRecord   // a record whose model names no request, tied to one by its key, time and tokens
	orphans []storage.UsageRecord            // records tied to no request
}

// attribute reads the usage records of the accounts of reqs. A record
// names its request in its model (the nonce); one whose model does not
// (the gateway read another model than the backend did) is tied to a
// request of its key that has no record, began before it and spells
// "model" otherwise: first by the exact usage the backend reported,
// then, for an estimate, to the first such request whose usage cannot
// have reached the gateway. Two such requests of one key, both cut
// short, may be mistaken for each other.
func (r *invariantRun) attribute(reqs []*fuzzReq, served map[string][]demobackend.Served) attribution {
	at := attribution{recs: map[string][]storage.UsageRecord{}, renamed: map[string]storage.UsageRecord{}}
	mine := map[string]bool{}
	var accts []*fuzzAccount
	for _, q := range reqs {
		mine[q.nonce] = true
		if !slices.Contains(accts, q.acct) {
			accts = append(accts, q.acct)
		}
	}
	var loose []storage.UsageRecord
	for _, a := range accts {
		recs, err := r.st.UsageRecords(context.Background(), a.id, 0)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, rec := range recs {
			n := nonceRE.FindString(rec.Model)
			switch {
			case mine[n]:
				at.recs[n] = append(at.recs[n], rec)
			case n == "":
				loose = append(loose, rec)
			}
		}
	}
	take := func(q *fuzzReq, match func(storage.UsageRecord) bool) {
		if len(at.recs[q.nonce]) > 0 || q.outcome.sent.IsZero() || q.namesModel() {
			return
		}
		for i, rec := range loose {
			if rec.KeyID == q.key.id && !rec.Started.Before(q.outcome.sent.Add(-time.Second)) && match(rec) {
				at.recs[q.nonce] = []storage.UsageRecord{rec}
				at.renamed[q.nonce] = rec
				loose = slices.Delete(loose, i, i+1)
				return
			}
		}
	}
	for _, q := range reqs {
		p, c, n := servedUsage(served[q.nonce])
		take(q, func(rec storage.UsageRecord) bool {
			return n > 0 && !rec.Estimated && rec.PromptTokens == p && rec.CompletionTokens == c
		})
	}
	for _, q := range reqs {
		// An estimate stands for usage that never reached the gateway: a
		// request whose answer went out whole, usage included, to a client
		// that read it cannot be its owner.
		owes := q.outcome.left || q.outcome.err != ""
		for _, sv := range served[q.nonce] {
			owes = owes || !sv.Complete || !sv.Reported
		}
		take(q, func(rec storage.UsageRecord) bool { return rec.Estimated && owes })
	}
	at.orphans = loose
	return at
}

// servedUsage sums the usage the backend reported for a request's
// completions, negative counts as zero, and counts them.
func servedUsage(sv []demobackend.Served) (prompt, completion int64, n int) {
	for _, s := range sv {
		prompt += max(int64(s.Usage.PromptTokens), 0)
		completion += max(int64(s.Usage.CompletionTokens), 0)
	}
	return prompt, completion, len(sv)
}

// checkRequests holds each request's charges against what the upstream
// served it.
func (r *invariantRun) checkRequests(reqs []*fuzzReq, served map[string][]demobackend.Served, base string) {
	at := r.attribute(reqs, served)
	for _, q := range reqs {
		fs := judge(q, served[q.nonce], at.recs[q.nonce])
		if rec, ok := at.renamed[q.nonce]; ok {
			fs = append(fs, finding{"a request is recorded under another model than the backend read",
				fmt.Sprintf("recorded as model %q; the backend read %q", rec.Model, q.nonce)})
		}
		for _, f := range fs {
			r.report(q, f, base)
		}
	}
	for _, rec := range at.orphans {
		r.violate("a usage record of no request", fmt.Sprintf("%+v", rec), "")
	}
}

type finding struct{ class, detail string }

// shape sorts a request by what tends to decide how the gateway meters
// it: its route, whether the Content-Type it reads (the first one) is
// multipart, the usage its answer reports, and when its client left.
// Findings are counted, and their first instances cut down, per class
// and shape, so that one cause does not hide another of the same class.
func shape(q *fuzzReq) string {
	ct, _ := q.build().get("Content-Type")
	kind := "json or other"
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "multipart/") {
		kind = "multipart"
	}
	phase := "client read the whole answer"
	switch {
	case q.outcome.left && q.outcome.status == 0:
		phase = "client left before the answer"
	case q.outcome.left || q.outcome.err != "":
		phase = "client left during the answer"
	}
	usage := []string{"", ", implausible usage", ", negative usage"}[q.reply.usage]
	return fmt.Sprintf("%s, %s Content-Type, %s%s", q.route, kind, phase, usage)
}

// judge is the invariant for one request: its upstream completions and
// its usage records.
func judge(q *fuzzReq, sv []demobackend.Served, recs []storage.UsageRecord) []finding {
	var out []finding
	left := q.outcome.left || q.outcome.err != ""
	incomplete, unreported := false, false
	for _, s := range sv {
		incomplete = incomplete || !s.Complete
		unreported = unreported || !s.Reported
	}
	prompt, completion, _ := servedUsage(sv)
	seen := fmt.Sprintf("client saw %d %q, %d bytes read, left: %v", q.outcome.status, q.outcome.contentType, q.outcome.read, left)
	switch {
	case len(sv) > 0 && len(recs) == 0:
		return append(out, finding{"a completion the backend served is not charged",
			fmt.Sprintf("%d completion(s) served (%d + %d tokens, complete: %v); %s", len(sv), prompt, completion, !incomplete, seen)})
	case len(recs) == 0:
		return nil
	case len(recs) > 1:
		out = append(out, finding{"a request is charged more than once", fmt.Sprintf("%d usage records", len(recs))})
	}
	rec := recs[0]
	recDesc := fmt.Sprintf("recorded %d + %d tokens, %d cents, estimated %v", rec.PromptTokens, rec.CompletionTokens, rec.CostCents, rec.Estimated)
	if q.key != nil && rec.KeyID != q.key.id {
		out = append(out, finding{"a request is charged to another key", fmt.Sprintf("key %s, recorded under %s", q.key.id, rec.KeyID)})
	}
	if rec.CostCents < docMinChargeCents || rec.CostCents > docMaxChargeCents {
		out = append(out, finding{"a charge outside the minimum and the cap", recDesc})
	}
	if rec.PromptTokens < 0 || rec.CompletionTokens < 0 {
		out = append(out, finding{"negative token counts are recorded", recDesc})
	}
	if len(sv) == 0 {
		if !rec.Estimated || !left {
			out = append(out, finding{"a request no completion was served for is charged", recDesc + "; " + seen})
		}
		return out
	}
	if rec.Estimated {
		if !left && !incomplete && !unreported {
			out = append(out, finding{"a charge is estimated although the backend's usage reached the gateway",
				fmt.Sprintf("backend reported %d + %d; %s; %s", prompt, completion, recDesc, seen)})
		}
		return out
	}
	want := documentedPrice(prompt, completion)
	exact := rec.PromptTokens == prompt && rec.CompletionTokens == completion
	if q.reply.usage == usageHuge {
		// Implausible counts may be bounded; the charge is the cap either way.
		exact = rec.PromptTokens <= prompt && rec.CompletionTokens <= completion
	}
	if !exact || rec.CostCents != want {
		out = append(out, finding{"a charge differs from the documented price of the usage served",
			fmt.Sprintf("backend reported %d + %d (%d cents documented); %s", prompt, completion, want, recDesc)})
	}
	return out
}

// checkStreams: no key had more streams at the backend at once than its
// limit. Only streams that ran to their end with their client reading
// count: for those the gateway held the slot from before the upstream
// call until after it had read the last token (it may let go before the
// upstream's [DONE] is written), so any instant at which more of them
// were between those two points than the limit is a stream admitted
// without a slot.
func (r *invariantRun) checkStreams(reqs []*fuzzReq, served map[string][]demobackend.Served, base string) {
	const margin = 30 * time.Millisecond
	type span struct {
		q          *fuzzReq
		start, end time.Time
	}
	byKey := map[*fuzzKey][]span{}
	for _, q := range reqs {
		sv := served[q.nonce]
		if len(sv) != 1 || q.outcome.left || !q.outcome.complete || !sv[0].Complete {
			continue
		}
		isStream := sv[0].Stream
		if q.route == "v3" {
			isStream = strings.HasPrefix(q.outcome.contentType, "text/event-stream")
		}
		if isStream {
			byKey[q.key] = append(byKey[q.key], span{q, sv[0].Started, sv[0].LastToken})
		}
	}
	for k, spans := range byKey {
		sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
		for _, s := range spans {
			var at []*fuzzReq
			for _, o := range spans {
				if !o.start.After(s.start) && o.end.After(s.start.Add(margin)) {
					at = append(at, o.q)
				}
			}
			if len(at) > invariantStreams {
				var names, repro []string
				for _, q := range at {
					names = append(names, q.nonce+" ("+q.mutationNames()+")")
					repro = append(repro, q.curl(base))
				}
				r.violate("a key has more streams at the backend at once than its limit",
					fmt.Sprintf("key %s: %d streams at once, limit %d: %s", k.id, len(at), invariantStreams, strings.Join(names, ", ")),
					strings.Join(repro, "\n"))
				break
			}
		}
	}
}

// checkAccount: the account's ledger against its usage records and the
// credits the harness made, its floor, and its holds.
func (r *invariantRun) checkAccount(a *fuzzAccount, reqs []*fuzzReq) {
	ctx := context.Background()
	recs, err := r.st.UsageRecords(ctx, a.id, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	book := readLedger(r.t, r.st, a.id)
	charges := map[string]storage.LedgerEntry{}
	var credits, floor int64
	for _, le := range book.entries {
		if le.Kind == storage.EntryCharge {
			charges[le.Reference] = le
			if le.AmountCents >= 0 {
				r.violate("a ledger charge that does not debit", fmt.Sprintf("account %s: %+v", a.name, le), "")
			}
			continue
		}
		credits += le.AmountCents
	}
	for _, rec := range recs {
		floor -= max(rec.CostCents-docMinChargeCents, 0)
		le, ok := charges["req:"+rec.RequestID]
		switch {
		case !ok:
			r.violate("a usage record without its ledger charge", fmt.Sprintf("account %s: %+v", a.name, rec), "")
		case le.AmountCents != -rec.CostCents:
			r.violate("a ledger charge differs from its usage record", fmt.Sprintf("account %s: charge %d, record %d cents", a.name, le.AmountCents, rec.CostCents), "")
		}
		delete(charges, "req:"+rec.RequestID)
	}
	for ref, le := range charges {
		r.violate("a ledger charge without a usage record", fmt.Sprintf("account %s: %s %+v", a.name, ref, le), "")
	}
	switch {
	case credits > a.credited:
		r.violate("the ledger credits more than was paid", fmt.Sprintf("account %s: %d cents credited, %d paid", a.name, credits, a.credited), "")
	case credits < a.credited:
		r.violate("an accepted top-up is missing from the ledger", fmt.Sprintf("account %s: %d cents credited, %d accepted", a.name, credits, a.credited), "")
	}
	if !book.consistent() {
		r.violate("the ledger does not add up to the balance", fmt.Sprintf("account %s: entries sum to %d, last running balance %d, balance %d", a.name, book.sum, book.last, book.balance), "")
	}
	if book.balance < floor {
		r.violate("a balance is below its documented floor", fmt.Sprintf("account %s: balance %d cents, floor %d (%d charges)", a.name, book.balance, floor, len(recs)), "")
	}
	// Holds are freed when their charges commit, or when a request that is
	// not charged ends; settle waited for every request to.
	if reserved, err := r.reserved(a); err == nil && reserved != 0 && !r.once("hold "+a.name) {
		const class = "a hold is left behind"
		detail := fmt.Sprintf("account %s: reserved_cents %d well after its last request", a.name, reserved)
		var suspects, repro []string
		var mine []*fuzzReq
		for _, q := range reqs {
			if q.acct == a {
				mine = append(mine, q)
			}
		}
		// The requests whose client left early are the likely holders.
		sort.SliceStable(mine, func(i, j int) bool { return mine[i].outcome.left && !mine[j].outcome.left })
		for _, q := range mine {
			if q.outcome.left || q.outcome.err != "" {
				suspects = append(suspects, q.curl(r.g.base))
			}
		}
		r.mu.Lock()
		first := r.counts[class] == 0
		r.mu.Unlock()
		if first {
			if q := r.isolate(mine, r.leavesHold); q != nil {
				repro = append(repro, "# alone, on an account of its own, this request leaves its hold:", q.curl(r.g.base))
			} else if group := r.bisect(mine, r.groupLeavesHold); group != nil {
				repro = append(repro, fmt.Sprintf("# these %d requests, sent together as in the batch on an account of their own, leave a hold:", len(group)))
				for _, q := range group {
					repro = append(repro, fmt.Sprintf("# (at +%s)", q.start), q.curl(r.g.base))
				}
			}
		}
		if repro == nil {
			repro = append([]string{"# no request leaves a hold alone; the requests of the account whose client left:"}, suspects...)
		}
		r.violate(class, detail, strings.Join(repro, "\n"))
	}
}

// reserved is the account's reserved_cents; an error when the gateway
// does not answer (it exited: the batch's exit check reports it).
func (r *invariantRun) reserved(a *fuzzAccount) (int64, error) {
	status, body := r.admin("GET", "/admin/accounts/"+a.name, r.operator, "")
	var acct struct {
		Reserved int64 `json:"reserved_cents"`
	}
	if status == 0 {
		return 0, errors.New(body)
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &acct) != nil {
		r.t.Fatalf("account %s: %d %s", a.name, status, body)
	}
	return acct.Reserved, nil
}

// checkLeftovers: with Redis, no lease or hold is recorded once nothing
// is in flight.
//
// A member's score is its expiry, one lease TTL after it was taken or
// last renewed: the requests sent about then are shown as its likely
// owners.
func (r *invariantRun) checkLeftovers(reqs []*fuzzReq) {
	url, prefix := r.e["SWITCHYARD_REDIS_URL"], r.e["SWITCHYARD_REDIS_PREFIX"]
	if url == "" {
		return
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := r.redisLeftovers(url, prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, l := range r.redisLeftovers(url, prefix) {
		if r.once("redis " + l.key + " " + l.member) {
			continue
		}
		taken := l.expiry.Add(-invariantLeaseTTL)
		var near []*fuzzReq
		for _, q := range reqs {
			if d := q.outcome.sent.Sub(taken); d > -time.Second && d < time.Second {
				near = append(near, q)
			}
		}
		sort.Slice(near, func(i, j int) bool {
			return absDuration(near[i].outcome.sent.Sub(taken)) < absDuration(near[j].outcome.sent.Sub(taken))
		})
		var repro []string
		for _, q := range near[:min(len(near), 4)] {
			repro = append(repro, fmt.Sprintf("# sent %s from when it was taken:", q.outcome.sent.Sub(taken).Round(time.Millisecond)), q.curl(r.g.base))
		}
		if len(repro) > 0 {
			repro = append([]string{"# the requests sent closest to when it was taken or last renewed:"}, repro...)
		}
		r.violate("a lease or hold is left in Redis", fmt.Sprintf("%s %s, taken or renewed at %s", l.key, l.member, taken.Format("15:04:05.000")),
			strings.Join(repro, "\n"))
	}
}

// invariantLeaseTTL is the limiter's default lease_ttl, which the run's
// config keeps.
const invariantLeaseTTL = 30 * time.Second

func absDuration(d time.Duration) time.Duration { return max(d, -d) }

type redisLeftover struct {
	key, member string
	expiry      time.Time
}

// redisLeftovers are the live stream leases and balance holds under
// prefix: members of the limiter's sorted sets scored by their expiry,
// in seconds since 2017 (the limiter's epoch).
func (r *invariantRun) redisLeftovers(url, prefix string) []redisLeftover {
	opts, err := redis.ParseURL(url)
	if err != nil {
		r.t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const epoch = 1483228800
	now := float64(time.Now().UnixMicro())/1e6 - epoch
	var out []redisLeftover
	iter := c.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if !strings.HasSuffix(k, ":streams") && !strings.HasSuffix(k, ":holds") {
			continue
		}
		members, err := c.ZRangeByScoreWithScores(ctx, k, &redis.ZRangeBy{Min: "(" + formatFloat(now), Max: "+inf"}).Result()
		if err != nil {
			r.t.Fatal(err)
		}
		for _, m := range members {
			out = append(out, redisLeftover{key: k, member: m.Member.(string),
				expiry: time.UnixMicro(int64((m.Score + epoch) * 1e6))})
		}
	}
	if err := iter.Err(); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// probeSlots takes every stream slot of k with streams the upstream
// holds open, checks that one more is refused, and lets them go. The
// probes are charged like any request whose client left; they are
// returned for the checks.
func (r *invariantRun) probeSlots(k *fuzzKey, prefix string) []*fuzzReq {
	var probes []*fuzzReq
	stop := make(chan struct{})
	var wg sync.WaitGroup
	addr := strings.TrimPrefix(r.g.base, "http://")
	for i := range invariantStreams + 1 {
		q := &fuzzReq{nonce: fmt.Sprintf("%sx%d", prefix, i), route: "v1", stream: true, words: "probe", acct: k.acct, key: k,
			probe: true, reply: replyPlan{hang: true}}
		q.reqID = "fzq-" + q.nonce
		r.reqs.Store(q.nonce, q)
		probes = append(probes, q)
	}
	ended := make(chan struct{}, invariantStreams) // a probe that ended before stop: refused
	for _, q := range probes[:invariantStreams] {
		wg.Go(func() {
			q.outcome = q.hold(addr, stop)
			ended <- struct{}{}
		})
	}
	// The upstream has them all once each reached it; a refusal ends one
	// early.
	deadline := time.Now().Add(10 * time.Second)
wait:
	for {
		arrived := 0
		for _, req := range r.up.Requests() {
			if n := nonceOf(&req); strings.HasPrefix(n, prefix+"x") {
				arrived++
			}
		}
		if arrived >= invariantStreams || time.Now().After(deadline) {
			break
		}
		select {
		case <-ended:
			break wait
		case <-time.After(10 * time.Millisecond):
		}
	}
	extra := probes[invariantStreams]
	extraDone := make(chan struct{})
	go func() { extra.outcome = extra.hold(addr, stop); close(extraDone) }()
	select {
	case <-extraDone:
	case <-time.After(3 * time.Second):
	}
	close(stop)
	wg.Wait()
	<-extraDone
	if r.dead() {
		return probes // the batch's exit check reports it
	}
	for _, q := range probes[:invariantStreams] {
		if q.outcome.status != 0 && q.outcome.status != http.StatusOK {
			r.violate("a stream slot is left behind", fmt.Sprintf("key %s: stream %s of %d refused with %d %s after the batch", k.id, q.nonce, invariantStreams, q.outcome.status, q.outcome.body), "")
			break
		}
	}
	if extra.outcome.status != http.StatusTooManyRequests {
		r.violate("a stream beyond the key's limit is not refused", fmt.Sprintf("key %s: stream %d of %d answered %d %s", k.id, invariantStreams+1, invariantStreams, extra.outcome.status, extra.outcome.body), "")
	}
	return probes
}

// hold sends q as a plain JSON stream request and keeps it open until
// stop; the outcome's status is that of a refusal, or 200 once the
// stream's headers came.
func (q *fuzzReq) hold(addr string, stop <-chan struct{}) outcome {
	o := outcome{sent: time.Now(), left: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := q.build()
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+w.target, strings.NewReader(string(w.body)))
	for _, h := range w.header {
		req.Header.Add(h[0], h[1])
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			o.err = err.Error()
			return
		}
		defer resp.Body.Close()
		o.status, o.contentType = resp.StatusCode, resp.Header.Get("Content-Type")
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		o.body = b
	}()
	select {
	case <-done:
	case <-stop:
		cancel()
		<-done
		if o.status == 0 && strings.Contains(o.err, context.Canceled.Error()) {
			// Admitted: it reached the upstream and waited there until
			// the probe let it go.
			o.status, o.err = http.StatusOK, ""
		}
	}
	return o
}

// account creates an account through the admin API with keys, and mints
// the account's own token.
func (r *invariantRun) account(name string, thrifty bool, keys int) *fuzzAccount {
	a := &fuzzAccount{name: name, thrifty: thrifty}
	if status, body := r.adminRetry("POST", "/admin/accounts", r.operator, fmt.Sprintf(`{"name":%q}`, name)); status != http.StatusCreated {
		r.t.Fatalf("creating account %s: %d %s", name, status, body)
	}
	a.id = accountNamed(r.t, r.st, name).ID
	for range keys {
		status, body := r.adminRetry("POST", "/admin/accounts/"+name+"/keys", r.operator, `{"label":"invariant"}`)
		var k struct{ ID, Key string }
		if status != http.StatusCreated || json.Unmarshal([]byte(body), &k) != nil {
			r.t.Fatalf("creating a key of %s: %d %s", name, status, body)
		}
		a.keys = append(a.keys, &fuzzKey{id: k.ID, key: k.Key, acct: a})
	}
	var err error
	if a.token, err = admin.Mint(admin.MintConfig{Secret: r.secret, Subject: "owner@" + name, Account: name, TTL: 48 * time.Hour}); err != nil {
		r.t.Fatal(err)
	}
	return a
}

// topUp credits an account through the admin API, as the operator.
func (r *invariantRun) topUp(a *fuzzAccount, cents int64) {
	status, body := r.adminRetry("POST", "/admin/accounts/"+a.name+"/topups", r.operator,
		fmt.Sprintf(`{"cents":%d,"reference":"fzprobe-%s-%d"}`, cents, a.name, r.seq.Add(1)))
	if status != http.StatusCreated {
		r.t.Fatalf("topping up %s: %d %s", a.name, status, body)
	}
	a.credited += cents
}

// credit puts cents on an account's ledger directly, as an adjustment:
// the admin API's top-ups start at $5, and a thrifty account has cents.
func (r *invariantRun) credit(a *fuzzAccount, cents int64) {
	credit(r.t, r.st, a.id, cents, fmt.Sprintf("fzcredit-%s-%d", a.name, r.seq.Add(1)))
	a.credited += cents
}

func (r *invariantRun) admin(method, path, token, body string) (int, string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, r.g.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// adminRetry is admin for the harness's own set-up, waiting out the admin
// API's rate limits.
func (r *invariantRun) adminRetry(method, path, token, body string) (int, string) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status, b := r.admin(method, path, token, body)
		if status != http.StatusTooManyRequests || time.Now().After(deadline) {
			return status, b
		}
		time.Sleep(time.Second)
	}
}

// report records a finding about q (once per request and class), cut
// down to the mutations that still show it when it is the first of its
// class.
func (r *invariantRun) report(q *fuzzReq, f finding, base string) {
	sh := shape(q)
	r.mu.Lock()
	first := r.shapes[f.class][sh] == 0
	seen := r.reported[q.nonce+"\x00"+f.class]
	r.reported[q.nonce+"\x00"+f.class] = true
	if !seen {
		if r.shapes[f.class] == nil {
			r.shapes[f.class] = map[string]int{}
		}
		r.shapes[f.class][sh]++
	}
	r.mu.Unlock()
	if seen {
		return
	}
	repro := q.curl(base)
	if first && !q.probe {
		if m := r.minimise(q, r.showsFinding(f.class)); m != nil {
			repro = "# cut down to:\n" + m.curl(base) + "\n# as generated:\n" + repro
		}
	}
	r.record(f.class, fmt.Sprintf("%s (%s): %s", q.nonce, sh, f.detail), repro, first)
}

// replayAlone sends c alone, as the replay account's (or a's), and
// waits for the gateway to be done with it.
func (r *invariantRun) replayAlone(c *fuzzReq, a ...*fuzzAccount) {
	acct := r.replay
	if len(a) > 0 {
		acct = a[0]
	}
	c.acct, c.key, c.start = acct, acct.keys[0], 0
	r.reqs.Store(c.nonce, c)
	c.outcome = c.send(strings.TrimPrefix(r.g.base, "http://"))
	r.settle(acct)
}

// leavesHold is whether a request replayed alone, on a new account,
// leaves a hold behind once the gateway is done with it.
func (r *invariantRun) leavesHold(c *fuzzReq) bool {
	a := r.account(fmt.Sprintf("fzhold%d", r.seq.Add(1)), false, 1)
	r.credit(a, 100_000)
	r.replayAlone(c, a)
	r.reqs.Delete(c.nonce)
	n, err := r.reserved(a)
	return err == nil && n != 0
}

// groupLeavesHold is whether requests replayed together, at their
// offsets in their batch, on a new account, leave a hold behind.
func (r *invariantRun) groupLeavesHold(reqs []*fuzzReq) bool {
	a := r.account(fmt.Sprintf("fzhold%d", r.seq.Add(1)), false, 1)
	r.credit(a, 1_000_000)
	var wg sync.WaitGroup
	addr := strings.TrimPrefix(r.g.base, "http://")
	for _, q := range reqs {
		c := q.variant(-1, fmt.Sprintf("fzrb0x%d", r.seq.Add(1)))
		c.acct, c.key = a, a.keys[0]
		r.reqs.Store(c.nonce, c)
		wg.Go(func() {
			defer r.reqs.Delete(c.nonce)
			time.Sleep(c.start)
			c.outcome = c.send(addr)
		})
	}
	wg.Wait()
	r.settle(a)
	n, err := r.reserved(a)
	return err == nil && n != 0
}

// bisect narrows a set of requests for which shows holds by halves, for
// at most ten replays, and returns what is left; nil when the whole set
// replayed does not show it.
func (r *invariantRun) bisect(reqs []*fuzzReq, shows func([]*fuzzReq) bool) []*fuzzReq {
	if !shows(reqs) {
		return nil
	}
	for tries := 0; len(reqs) > 1 && tries < 10; tries += 2 {
		half := len(reqs) / 2
		switch {
		case shows(reqs[:half]):
			reqs = reqs[:half]
		case shows(reqs[half:]):
			reqs = reqs[half:]
		default:
			return reqs
		}
	}
	return reqs
}

// once reports whether what was already reported, and marks it so.
func (r *invariantRun) once(what string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.reported[what]
	r.reported[what] = true
	return seen
}

// isolate replays requests one at a time, those whose client left first,
// and returns the first for which shows holds, cut down; nil when none
// does within a dozen tries.
func (r *invariantRun) isolate(reqs []*fuzzReq, shows func(*fuzzReq) bool) *fuzzReq {
	for _, q := range reqs[:min(len(reqs), 12)] {
		if m := r.minimise(q, shows); m != nil {
			return m
		}
	}
	return nil
}

// showsFinding is whether a request replayed alone shows a finding of
// class.
func (r *invariantRun) showsFinding(class string) func(*fuzzReq) bool {
	return func(c *fuzzReq) bool {
		r.replayAlone(c)
		defer r.reqs.Delete(c.nonce)
		if r.dead() {
			// It ended the process instead: another finding, which the
			// next batch reports.
			return false
		}
		served := r.servedBy()
		at := r.attribute([]*fuzzReq{c}, served)
		fs := judge(c, served[c.nonce], at.recs[c.nonce])
		if _, ok := at.renamed[c.nonce]; ok {
			fs = append(fs, finding{class: "a request is recorded under another model than the backend read"})
		}
		for _, f := range fs {
			if f.class == class {
				return true
			}
		}
		return false
	}
}

// minimise replays q alone, leaving out one mutation (or the client's
// early exit) at a time and keeping each removal after which shows still
// holds. It returns nil when a replay of q itself does not show it (it
// needed company or timing).
func (r *invariantRun) minimise(q *fuzzReq, shows func(*fuzzReq) bool) *fuzzReq {
	next := func() string { return fmt.Sprintf("fzrb0x%d", r.seq.Add(1)) }
	cur := q.variant(-1, next())
	if !shows(cur) {
		return nil
	}
	for i := len(cur.muts); i >= 0; i-- {
		if i == len(cur.muts) && cur.cut.kind == cutNone {
			continue
		}
		if c := cur.variant(i, next()); shows(c) {
			cur = c
		}
	}
	return cur
}

// violate records a violation of the invariant: the first few of each
// class in full, the rest counted.
func (r *invariantRun) violate(class, detail, repro string) {
	r.t.Helper()
	r.record(class, detail, repro, false)
}

// record is violate, shown also past the first few of its class when
// show is set.
func (r *invariantRun) record(class, detail, repro string, show bool) {
	r.t.Helper()
	r.mu.Lock()
	r.counts[class]++
	n := r.shown[class]
	r.shown[class]++
	note := r.seedNote
	r.mu.Unlock()
	if n >= 3 && !show {
		return
	}
	msg := fmt.Sprintf("VIOLATION [%s] %s\n  %s", class, note, detail)
	if repro != "" {
		msg += "\n  reproduction (GATEWAY=" + r.g.base + "):\n" + indent(repro, "    ")
	}
	r.t.Error(msg)
}

// total is the number of violations so far; r.mu is held.
func (r *invariantRun) total() int {
	n := 0
	for _, c := range r.counts {
		n += c
	}
	return n
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// summary lists the classes of violations found, most frequent first.
func (r *invariantRun) summary() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.counts) == 0 {
		return
	}
	var classes []string
	for c := range r.counts {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool { return r.counts[classes[i]] > r.counts[classes[j]] })
	var b strings.Builder
	fmt.Fprintf(&b, "%s: violations of the billing invariant:\n", r.mode)
	for _, c := range classes {
		fmt.Fprintf(&b, "  %5d  %s\n", r.counts[c], c)
		var shapes []string
		for sh := range r.shapes[c] {
			shapes = append(shapes, sh)
		}
		sort.Slice(shapes, func(i, j int) bool { return r.shapes[c][shapes[i]] > r.shapes[c][shapes[j]] })
		for _, sh := range shapes {
			fmt.Fprintf(&b, "  %5s  %5d  %s\n", "", r.shapes[c][sh], sh)
		}
	}
	r.t.Error(b.String())
}
