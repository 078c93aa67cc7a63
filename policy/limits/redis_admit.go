package limits

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// maxAdmitPipeline bounds the admissions one pipeline carries.
const maxAdmitPipeline = 128

// admitCall is one admission on its way to Redis: the admit script's
// command and, once done is closed, Redis's answer.
type admitCall struct {
	req AdmitRequest
	id  string
	// claim decides who undoes what the script may have taken when
	// nobody uses it (runAdmit): 0 open, 1 answered, 2 abandoned by
	// the caller.
	claim atomic.Int32
	nkeys int8

	// The EVALSHA command is argc values of argv. What changes from one
	// admission to the next it holds as pointers to the fields below and
	// to req's: a pointer fits in an interface as it is, where a string
	// or a number is copied to the heap first, an allocation apiece.
	// (The counts are bytes beside claim so that a call, with the
	// allocator's header of 8 bytes, fits in its size class of 768
	// bytes, not 896.)
	argc int8
	argv [3 + 4 + 6]any
	keys [4]string
	// nums is ARGV[1], the script's numbers in one string.
	nums admitNums
	want int64
	// wanted is the member of a hold of want, "<id>|<want>" (strings).
	wanted string

	// reply is answer once the script's answer is read into it
	// (readAdmitReply); nil until then, or if it could not be.
	reply  []int64
	answer [admitReplyLen]int64
	err    error
	// done is closed once reply and err are set, for a caller that
	// waits for another goroutine to send c (queued or handed over). A
	// caller that sends c itself has the answer when it returns, and c
	// has no channel.
	done chan struct{}
	// lone is the context c is sent in when it goes alone (sendLone):
	// part of c, where a context with a timeout would be four
	// allocations more.
	lone deadlineCtx
}

// admitCalls keeps the calls their callers are done with (freeAdmitCall)
// for the next admissions: a call is 768 bytes, the largest part of an
// admission's garbage.
var admitCalls sync.Pool

// freeAdmitCall gives c back for another admission. Only its caller may,
// once it has read all it needs of c and no other goroutine will touch c
// again: it sent c itself, or it saw c's done closed, which the sender
// does after it is done with every call of the batch (sendAdmits). A
// caller that stopped waiting leaves c to the sender and the collector.
func freeAdmitCall(c *admitCall) { admitCalls.Put(c) }

// admitSHA is the admit script's SHA1, put in an interface once.
var admitSHA any = admitScript.Hash()

// newAdmitCall builds the admit script's command for req, whose key's
// state lives under owner's hash tag (KEYS and ARGV in redis_scripts.go).
func (r *Redis) newAdmitCall(req AdmitRequest, owner string) *admitCall {
	c, _ := admitCalls.Get().(*admitCall)
	if c == nil {
		c = new(admitCall)
	}
	*c = admitCall{req: req}
	req = c.req // from here on, its fields are c's
	res := &c.req.Reserve
	n := &c.nums
	if req.wantsLease() {
		n.set(numLease, float64(req.StreamLimit))
	}
	n.set(numTTL, r.leaseTTL.Seconds())
	c.nkeys = 2
	if res.wanted() {
		c.want = res.want()
		n.set(numWant, float64(c.want))
		n.set(numNeed, float64(res.min()))
		n.set(numBalanceTTL, r.balanceTTL.Seconds())
		if ks := &res.KeySpend; ks.limited() {
			n.set(numKeyLimit, float64(ks.Limit))
			n.set(numKeySpent, float64(ks.Spent))
		}
		c.nkeys = 4
	}
	n[numMode] = c.strings(r, owner)
	if req.Rate.Enabled() {
		n.set(numLimit, float64(req.Rate.Limit))
		n.set(numPeriod, req.Rate.Period.Seconds())
		n.set(numBurst, float64(req.Rate.burst()))
	}
	if r.now != nil {
		n[numClock] = 1
		now, _ := strconv.ParseFloat(r.nowArg(), 64)
		n.set(numNow, now)
	}
	argv := append(c.argv[:0], "evalsha", admitSHA, int(c.nkeys))
	for i := range c.nkeys {
		argv = append(argv, &c.keys[i])
	}
	argv = append(argv, n, &c.id)
	if res.wanted() {
		argv = append(argv, &c.wanted, &res.Balance)
		if ks := &res.KeySpend; ks.limited() {
			argv = append(argv, &ks.Key, &ks.Period)
		}
	}
	c.argc = int8(len(argv))
	return c
}

// admitNums is the admit script's ARGV[1]: its numbers packed as its
// struct.unpack reads them (admitNumsFormat: two bytes, then
// little-endian doubles, at the offsets below). A number sent as an
// argument of its own cost Redis's thread a Lua string made and
// interned, a slot in the ARGV table that grows as it fills, and a
// parse of its digits: about 1,400 instructions each, where one
// struct.unpack of them all takes about 2,800.
type admitNums [2 + 11*8]byte

const admitNumsFormat = "<BBddddddddddd"

// Offsets in admitNums. The doubles are exact for every whole number the
// limiter sends (below 2^53), and a period or TTL is the same double its
// decimal text was parsed to.
const (
	numMode       = 0  // byte: 0 no rate, 1 GCRA, 2 rolling in a sorted set, 3 rolling in a log
	numClock      = 1  // byte: 0 the server's clock (TIME), 1 numNow
	numNow        = 2  // seconds since epoch2017, to the microsecond (tests' clocks)
	numLimit      = 10 // the rate's limit
	numPeriod     = 18 // the rate's period, seconds
	numBurst      = 26 // GCRA's burst
	numLease      = 34 // the lease limit; 0 for no lease
	numTTL        = 42 // lease and hold TTL, seconds
	numWant       = 50 // cents wanted (0: check the balance, hold nothing)
	numNeed       = 58 // cents needed at least
	numBalanceTTL = 66 // the mirror's TTL when seeded, seconds
	numKeyLimit   = 74 // the key's spend limit; 0 for none
	numKeySpent   = 82 // the key's spend read with the lookup
)

func (n *admitNums) set(at int, v float64) {
	binary.LittleEndian.PutUint64(n[at:], math.Float64bits(v))
}

// MarshalBinary gives go-redis the bytes to send: a pointer to n in the
// command's arguments, where a slice would be copied to the heap.
func (n *admitNums) MarshalBinary() ([]byte, error) { return n[:], nil }

// strings sets c's keys, its id and the member of a hold of all it wants
// (wanted), parts of two strings, the keys' and the id's, where each
// would be an allocation of its own, and returns the script's mode. They
// are what Redis.gcraKey, logKey, windowKey, leaseKey, balanceKey,
// holdsKey and appendID make (TestAdmitCallStrings).
func (c *admitCall) strings(r *Redis, owner string) (mode byte) {
	req := &c.req
	var ends [4]int
	// A billed admission's four keys and id, under the default prefix
	// with the gateway's account and key ids, come to 330 – 380 bytes:
	// room for them on the stack, where a smaller buffer grew on the heap.
	var buf [512]byte
	b := buf[:0]
	switch {
	case !req.Rate.Enabled():
		mode, b = 0, r.appendKeyBase(append(b, "rate:"...), owner, req.Key)
	case req.Rate.Rolling && req.Rate.Limit <= rollingLogMax:
		mode, b = 3, append(r.appendKeyBase(b, owner, req.Key), ":log"...)
	case req.Rate.Rolling:
		mode, b = 2, append(r.appendKeyBase(b, owner, req.Key), ":window"...)
	default:
		mode, b = 1, r.appendKeyBase(append(b, "rate:"...), owner, req.Key)
	}
	ends[0] = len(b)
	b = append(r.appendKeyBase(b, owner, req.Key), ":streams"...)
	ends[1] = len(b)
	if res := &req.Reserve; res.wanted() {
		b = append(r.appendAccountTag(b, res.Account), ":balance"...)
		ends[2] = len(b)
		b = append(r.appendAccountTag(b, res.Account), ":holds"...)
		ends[3] = len(b)
	}
	idAt := len(b)
	ks := &req.Reserve.KeySpend
	// The hold's member names its key (admitScript).
	b = r.appendID(b, req.Reserve.wanted() && ks.limited(), ks.Key)
	idEnd := len(b)
	if c.want > 0 {
		b = strconv.AppendInt(append(b, '|'), c.want, 10)
	}
	// The keys are the same for every admission of the key: a stream's
	// lease and hold keep theirs until it ends, so the open streams of a
	// key share a copy (unique: found without an allocation; unique keeps
	// no copy alive, so after a collection the next admission may make
	// another), and each keeps its own id alone, where a string of all of
	// them was 300 – 380 bytes per stream.
	keys := unique.Make(string(b[:idAt])).Value()
	own := string(b[idAt:])
	from := 0
	for i := range c.nkeys {
		c.keys[i], from = keys[from:ends[i]], ends[i]
	}
	c.id, c.wanted = own[:idEnd-idAt], own
	return mode
}

// member is the member of c's hold of cents, as the admit script made it.
func (c *admitCall) member(cents int64) string {
	if cents == c.want {
		return c.wanted
	}
	return c.id + "|" + strconv.FormatInt(cents, 10)
}

// cmd is c's EVALSHA, for a pipeline or a call of its own.
func (c *admitCall) cmd(ctx context.Context) *redis.StringCmd {
	cmd := redis.NewStringCmd(ctx, c.argv[:c.argc]...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// read sets c's reply and err from cmd's answer.
func (c *admitCall) read(cmd *redis.StringCmd) { c.readAnswer(cmd.Result()) }

func (c *admitCall) readAnswer(answer string, err error) {
	c.reply, c.err = nil, err
	if err == nil {
		if c.err = readAdmitReply(&c.answer, answer); c.err == nil {
			c.reply = c.answer[:]
		}
	}
}

// eval runs c as an EVAL, for a Redis that does not know the script
// (restarted, or a replica that took over), and reads its answer.
func (c *admitCall) eval(ctx context.Context, client redis.Scripter) {
	c.readAnswer(admitScript.Eval(ctx, client, c.keys[:c.nkeys], c.argv[3+c.nkeys:c.argc]...).Text())
}

// admitReplyLen is the admit script's answer's length in numbers, which
// it packs in one string, each a little-endian double (redis_scripts.go
// says why): allowed (1 admitted); lease (0 none asked, 1 taken, 2
// refused); remaining; retry_after and reset_after in whole
// microseconds, retry_after of an admission whose rate has nothing
// remaining the time until the next would be admitted; hold, the cents
// held (0 none asked, -1 refused for lack of balance, -2 refused by the
// key's spend limit); then with -1 the balance less the holds, with -2
// the key's spend and its holds.
const admitReplyLen = 8

// readAdmitReply reads the admit script's answer s into reply.
func readAdmitReply(reply *[admitReplyLen]int64, s string) error {
	if len(s) != 8*admitReplyLen {
		return fmt.Errorf("limits: admit script answered %d bytes", len(s))
	}
	for i := range reply {
		var bits uint64
		for j := 8*i + 7; j >= 8*i; j-- {
			bits = bits<<8 | uint64(s[j])
		}
		// Truncated as Redis truncates a Lua number it answers as an
		// integer: the script adds half a microsecond to round.
		reply[i] = int64(math.Float64frombits(bits))
	}
	return nil
}

// admitQueue lets a node's concurrent admissions share round trips: while
// one pipeline of admissions is in flight, those that arrive wait, and go
// together as the next pipeline the moment it returns. An admission that
// finds none in flight goes at once, so a lone request waits for no one
// and one that queued waits at most for the pipeline ahead of it. Redis
// then reads and answers one pipeline where it would read and answer one
// connection per request, and the node writes and reads once for them
// all.
type admitQueue struct {
	mu      sync.Mutex
	busy    bool // a pipeline is in flight
	waiting []*admitCall
	// pipelineDone is the done channel of the admissions at the back of
	// waiting. Those one pipeline carries share one (join), closed once
	// their answers are in, where each had a channel of its own.
	pipelineDone chan struct{}
	// idle hands an admission that found no pipeline in flight to a
	// sender waiting for one (Redis.sender).
	idle chan *admitCall
	// pipe is the pipeline the sender uses again and again: only the
	// sender of the pipeline in flight (busy) touches it, and Exec leaves
	// it empty.
	pipe redis.Pipeliner
	// ctx is the context pipe is sent in, used again as pipe is: at one
	// request at a time every admission goes in a pipeline, with the last
	// request's release, and context.WithTimeout made a context, a
	// channel and a timer for each.
	ctx deadlineCtx
	// settleArgv holds the values of the settlements pipe carries, and
	// releaseCmds the commands of its releases, used again as pipe is.
	settleArgv  []any
	releaseCmds []releaseCmds
}

// join queues c behind the pipeline in flight and reports true, or
// reports false and marks a pipeline in flight: the caller sends c.
func (q *admitQueue) join(c *admitCall) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy {
		// next takes the first maxAdmitPipeline of waiting at a time, so
		// the admissions a pipeline carries are those that joined
		// between two multiples of it.
		if len(q.waiting)%maxAdmitPipeline == 0 {
			q.pipelineDone = make(chan struct{})
		}
		c.done = q.pipelineDone
		q.waiting = append(q.waiting, c)
		return true
	}
	q.busy = true
	return false
}

// queued reports whether admissions queued behind the pipeline that
// returned, or, when none did, marks nothing in flight.
func (q *admitQueue) queued() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) > 0 {
		return true
	}
	q.busy = false
	return false
}

// next takes up to maxAdmitPipeline of the admissions that queued, the
// oldest first, or, when none did, marks nothing in flight.
func (q *admitQueue) next() []*admitCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := min(len(q.waiting), maxAdmitPipeline)
	if k == 0 {
		q.busy = false
		return nil
	}
	batch := make([]*admitCall, k)
	copy(batch, q.waiting)
	n := copy(q.waiting, q.waiting[k:])
	clear(q.waiting[n:])
	q.waiting = q.waiting[:n]
	return batch
}

// runAdmit runs the admit script of c, in one round trip with the
// admissions that arrive meanwhile (admitQueue) and the releases this
// node has gathered (releases): what the node freed is free for its next
// admission, and a stream's end needs no round trip of its own while the
// node admits requests. A pipeline runs to its end, within the limiter's
// timeout, even if a request in it went away: the releases are other
// requests' to lose, and what an admission nobody uses took is undone.
//
// It waits for the answer as call waits for its function, through the
// breaker and within the timeout, but with no goroutine of its own: one
// that queues waits here for the pipeline that carries it. One that
// finds none in flight sends itself when the client ends a call at its
// context's deadline (sendsOwn), and hands what queued meanwhile to the
// node's sender; with a client that does not, it hands itself to the
// sender and waits for it as one that queued, so that it returns at the
// timeout whatever the client does.
//
// Whoever learns last that nobody will use what the script may have
// taken undoes it (undoAdmit): the sender, once it has the answer, if
// the caller stopped waiting (its context ended, or the timeout passed
// while the admission waited behind the pipeline in flight, which runs
// it later all the same); or the caller, if the answer came first but
// with an error or too late.
//
// With an error it gives c back (freeAdmitCall) unless the sender may
// still hold it; with none the caller does, once it has read the answer.
func (r *Redis) runAdmit(ctx context.Context, c *admitCall) error {
	ok, probe := r.breaker.allow()
	if !ok {
		freeAdmitCall(c)
		return errBreakerOpen
	}
	answered := false
	switch {
	case r.admits.join(c):
	case r.sendsOwn:
		r.sendOwn(c)
		answered = true
	default:
		c.done = make(chan struct{})
		r.handOver(c)
	}
	if !answered {
		t := getTimer(r.timeout)
		select {
		case <-c.done:
			answered = true
		case <-ctx.Done():
		case <-t.C:
		}
		putTimer(t)
	}
	if !answered {
		select {
		case <-c.done: // it made it after all
			answered = true
		default:
		}
	}
	var err error
	if answered {
		err = c.err
	} else {
		err = fmt.Errorf("%w after %s", context.DeadlineExceeded, r.timeout)
	}
	if err != nil && !c.claim.CompareAndSwap(0, 2) {
		r.undoAdmit(c.req, c.id, c.reply)
	}
	if err != nil && answered {
		freeAdmitCall(c)
	}
	return r.called(ctx, "admit", probe, err)
}

// sendOwn sends c, which found no pipeline in flight, from its caller's
// goroutine, and hands what queued behind it to the sender. At one
// request at a time nothing queues, and the admission's round trip wakes
// no other goroutine: handing it over woke the sender, and its answer
// the caller, each a wake-up of a parked thread on the way there and
// back, about as long as Redis takes to run the script. The pipeline
// runs to its end even if the caller's request goes away: the client
// ends it at the limiter's timeout (sendAdmits).
func (r *Redis) sendOwn(c *admitCall) {
	r.sendAdmits([]*admitCall{c})
	if r.admits.queued() {
		r.handOver(nil)
	}
}

// handOver gives the sender c, or with a nil c what queued behind the
// pipeline that returned, starting one if none waits.
func (r *Redis) handOver(c *admitCall) {
	select {
	case r.admits.idle <- c:
	default:
		guard.Go(redisAdmitGoroutine, func() { r.sender(c) })
	}
}

// Timers for runAdmit's waits, used again: one is stopped before it is
// put back, and since Go 1.23 a stopped timer's channel holds no stale
// tick.
var timers sync.Pool

func getTimer(d time.Duration) *time.Timer {
	if t, _ := timers.Get().(*time.Timer); t != nil {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

func putTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}

// senderIdle is how long a sender waits for the next admission that
// finds no pipeline in flight before it ends.
const senderIdle = time.Second

// sender sends c (none: what queued behind a pipeline its caller sent,
// sendOwn), then what queued behind it until nothing is left, and then
// waits up to senderIdle to do the same for the next hand-over. A
// goroutine started for each would begin with a small stack and grow
// it, copying it each time, as deep as the Redis client goes: a sixth of
// a lone admission's CPU.
func (r *Redis) sender(c *admitCall) {
	var idle *time.Timer
	for {
		batch := []*admitCall{c}
		if c == nil {
			batch = r.admits.next()
		}
		for ; batch != nil; batch = r.admits.next() {
			r.sendAdmits(batch)
		}
		if idle == nil {
			idle = time.NewTimer(senderIdle)
			defer idle.Stop()
		} else {
			idle.Reset(senderIdle)
		}
		select {
		case c = <-r.admits.idle:
		case <-idle.C:
			return
		}
	}
}

// undoAbandoned undoes what c took, whose caller stopped waiting for it
// (runAdmit). A panic on the way is counted, and the sender goes on.
func (r *Redis) undoAbandoned(c *admitCall) {
	_ = guard.Run(redisAdmitGoroutine, func() { r.undoAdmit(c.req, c.id, c.reply) })
}

// sendAdmits runs the admissions of batch, with the gathered releases
// ahead of them, and completes each. It does not panic: a panic on the
// way (in the Redis client, say) is the error of every admission it left
// without an answer, the releases it took are finished as unsent (and so
// tried again), and whoever sent the batch
// goes on to send the admissions queued behind it. A sender that died
// instead would leave the queue marked busy, and every later admission
// of the node waiting for a pipeline that never returns.
func (r *Redis) sendAdmits(batch []*admitCall) {
	var releases []release
	handedOver := false // releases were passed to Redis.released
	defer func() {
		if v := recover(); v != nil {
			err := guard.Recovered(redisAdmitGoroutine, v)
			for _, c := range batch {
				if c.reply == nil && c.err == nil {
					c.err = err
				}
			}
			if !handedOver {
				r.released(releases, nil)
			}
			// They may hold what was queued before the panic.
			r.admits.pipe, r.admits.settleArgv, r.admits.releaseCmds = nil, nil, nil
		}
		// Every read of the batch's calls comes before the first done is
		// closed: a caller woken by it may give its call back
		// (freeAdmitCall), and another admission take it and write it.
		for _, c := range batch {
			if !c.claim.CompareAndSwap(0, 1) {
				r.undoAbandoned(c)
			}
		}
		closeDone(batch)
	}()
	releases = r.releases.take()
	if len(batch) == 1 && len(releases) == 0 {
		r.sendLone(batch[0])
		return
	}
	ctx := r.admits.ctx.start(r.timeout, &r.loneDone)
	if r.admits.pipe == nil {
		r.admits.pipe = r.client.Pipeline()
	}
	pipe := r.admits.pipe
	r.admits.settleArgv = settleArgv(r.admits.settleArgv, releases)
	cmds := queueReleases(ctx, pipe, releases, r.admits.settleArgv, r.admits.releaseCmds)
	r.admits.releaseCmds = cmds
	admits := make([]*redis.StringCmd, len(batch))
	for i, c := range batch {
		admits[i] = c.cmd(ctx)
		_ = pipe.Process(ctx, admits[i])
	}
	_, _ = pipe.Exec(ctx)
	handedOver = true
	r.released(releases, cmds)
	// The batch's commands point into its array, which the next releases
	// are written over.
	clear(cmds)
	r.releases.recycle(releases)
	for i, c := range batch {
		if noScript(admits[i].Err()) {
			c.eval(ctx, r.client)
			continue
		}
		c.read(admits[i])
	}
}

// closeDone closes the done channels of batch, once each: the
// admissions that queued for it share one (admitQueue.join), one handed
// over has its own, one its caller sends has none. It reads them all
// before it closes any: a woken caller may give its call back and the
// next admission set the call's done to another channel, which a later
// read would close early, or close twice, a panic in the deferred
// completion that nothing recovers. Usually the whole batch shares one
// channel, or a lone admission has one: the list stays on the stack.
func closeDone(batch []*admitCall) {
	var buf [4]chan struct{}
	done := buf[:0]
	for _, c := range batch {
		if c.done != nil && !slices.Contains(done, c.done) {
			done = append(done, c.done)
		}
	}
	for _, ch := range done {
		close(ch)
	}
}

// sendLone sends c, with nothing to go with it, as one command in its
// own context, ended by the limiter's timeout.
func (r *Redis) sendLone(c *admitCall) {
	ctx := c.lone.start(r.timeout, &r.loneDone)
	cmd := c.cmd(ctx)
	_ = r.client.Process(ctx, cmd)
	if noScript(cmd.Err()) {
		c.eval(ctx, r.client)
		return
	}
	c.read(cmd)
}
