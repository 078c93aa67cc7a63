package translator

import (
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/translator/wire"
)

// activities hands out the act events of one response. Only one activity
// is open at a time: model rounds and tool calls run one after another.
// It is safe for concurrent use because the heartbeat reads the open
// activity from its own goroutine.
type activities struct {
	now   func() time.Time
	chars bool // Revision B: model activities carry live character counters

	mu     sync.Mutex
	last   int64
	isOpen bool
	open   openActivity // kept in place: a stream holds one for as long as it waits
}

type openActivity struct {
	id      int64
	kind    string
	label   string
	started time.Time
	chars   wire.Chars
}

// start opens an activity and returns its start event.
func (a *activities) start(kind, label string) *wire.Act {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last++
	a.open, a.isOpen = openActivity{id: a.last, kind: kind, label: label, started: a.now()}, true
	return &wire.Act{ID: a.last, Op: wire.ActStart, Kind: kind, Label: label}
}

// setChars updates the counters of the open model activity.
func (a *activities) setChars(c wire.Chars) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.isOpen {
		a.open.chars = c
	}
}

// tick returns a heartbeat for the open activity, or nil when none is open.
func (a *activities) tick() *wire.Act {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.isOpen {
		return nil
	}
	act := a.event(wire.ActTick)
	return act
}

// end closes the open activity with op wire.ActDone or wire.ActFail.
func (a *activities) end(op, obj string) *wire.Act {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.isOpen {
		return nil
	}
	act := a.event(op)
	ms := a.now().Sub(a.open.started).Milliseconds()
	act.MS = &ms
	act.Obj = obj
	a.open, a.isOpen = openActivity{}, false
	return act
}

func (a *activities) event(op string) *wire.Act {
	act := &wire.Act{ID: a.open.id, Op: op, Kind: a.open.kind, Label: a.open.label}
	if a.chars && a.open.kind == wire.ActModel {
		c := a.open.chars
		act.Chars = &c
	}
	return act
}
