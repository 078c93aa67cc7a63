package admin

import (
	"fmt"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// DefaultRefusalInterval is Config.RefusalInterval's default.
const DefaultRefusalInterval = time.Minute

// maxRefusalSources bounds the sources whose refusals are counted at
// once. Past it, refusals of new sources share one overflow count, so
// that a flood from many addresses cannot grow the counts without end.
const maxRefusalSources = 10_000

// overflowSource is the source of refusals counted past
// maxRefusalSources.
const overflowSource = "*"

// refusalsWritten is how many refusals alike are written one by one in
// an interval before the rest are only counted: enough that a person's
// mistakes are all on record, few enough that a flood is not.
const refusalsWritten = 10

// refusalKey is what makes refusals alike: who was refused (a token's
// subject, or an address for requests without a genuine token), what was
// attempted, how it was answered, and whether it is stored or only
// logged.
type refusalKey struct {
	source, action, outcome string
	stored                  bool
}

// refusalWindow counts the refusals of one key within an interval.
type refusalWindow struct {
	start time.Time
	// stored tells whether the refusals go to the audit log (and the
	// server log) or only to the server log.
	stored bool
	// overflow marks the window of the sources past maxRefusalSources.
	overflow bool
	// written counts the refusals written one by one; more counts those
	// after them, which were not, and last is the newest of those, the
	// template of their summary.
	written, more int
	last          storage.AuditEntry
}

// refusals keeps a flood of refused requests from filling the audit log
// and the server log. Of the refusals alike (refusalKey), the first
// refusalsWritten of an interval are written as they are and the others
// only counted; once the interval is over, one summary entry says how
// many there were and until when. So a source writes at most
// refusalsWritten + 1 entries per kind of refusal and interval, however
// fast it asks. It is safe for concurrent use.
type refusals struct {
	interval time.Duration
	now      func() time.Time
	// write writes an entry to the audit log and the server log, or, with
	// stored false, to the server log only.
	write func(e storage.AuditEntry, stored bool)

	mu      sync.Mutex
	windows map[refusalKey]*refusalWindow
}

func newRefusals(interval time.Duration, now func() time.Time, write func(storage.AuditEntry, bool)) *refusals {
	return &refusals{interval: interval, now: now, write: write, windows: make(map[refusalKey]*refusalWindow)}
}

// record writes e, a refusal of source, unless refusalsWritten alike
// were written in the current interval; then it only counts it. A
// summary due for the previous interval is written first.
func (f *refusals) record(source string, e storage.AuditEntry, stored bool) {
	now := f.now()
	key := refusalKey{source: source, action: e.Action, outcome: e.Outcome, stored: stored}
	f.mu.Lock()
	w, ok := f.windows[key]
	if !ok && len(f.windows) >= maxRefusalSources {
		key.source = overflowSource
		w, ok = f.windows[key]
	}
	var summary *storage.AuditEntry
	if ok && now.Sub(w.start) >= f.interval {
		summary = w.summary(now)
		ok = false
	}
	if !ok {
		w = &refusalWindow{start: now, stored: stored, overflow: key.source == overflowSource}
		f.windows[key] = w
	}
	if w.written >= refusalsWritten {
		w.more++
		w.last = e
		f.mu.Unlock()
		return
	}
	w.written++
	f.mu.Unlock()
	if summary != nil {
		f.write(*summary, stored)
	}
	f.write(e, stored)
}

// flush writes the summaries of the intervals that are over at now, or
// of all of them when all is set, and forgets those windows.
func (f *refusals) flush(now time.Time, all bool) {
	type due struct {
		e      storage.AuditEntry
		stored bool
	}
	var out []due
	f.mu.Lock()
	for k, w := range f.windows {
		if !all && now.Sub(w.start) < f.interval {
			continue
		}
		if s := w.summary(now); s != nil {
			out = append(out, due{*s, w.stored})
		}
		delete(f.windows, k)
	}
	f.mu.Unlock()
	for _, d := range out {
		f.write(d.e, d.stored)
	}
}

// summary is the entry that stands for the refusals w counted but did
// not write; nil when there were none.
func (w *refusalWindow) summary(now time.Time) *storage.AuditEntry {
	if w.more == 0 {
		return nil
	}
	s := w.last
	s.At = time.Time{}
	like := "like this"
	if w.overflow {
		// The count spans many sources; the template names one of them.
		like = "like this from other sources as well"
	}
	s.Detail = fmt.Sprintf("%d more %s from %s to %s, not recorded one by one",
		w.more, like, w.start.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	return &s
}
