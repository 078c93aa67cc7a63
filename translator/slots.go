package translator

import (
	"context"
	"sync"
)

// accountSlots bounds the calls each account runs at once. It is safe
// for concurrent use.
type accountSlots struct {
	limit int
	mu    sync.Mutex
	held  map[string]*slots // accounts with a call running or waiting
}

// slots is one account's share: a semaphore of limit places, and how
// many calls hold or wait for one, so that an idle account's entry goes.
type slots struct {
	places chan struct{}
	users  int
}

func newAccountSlots(limit int) *accountSlots {
	return &accountSlots{limit: limit, held: make(map[string]*slots)}
}

// acquire waits for one of account's places and returns the function
// that gives it back, or ctx's error when ctx ends first.
func (a *accountSlots) acquire(ctx context.Context, account string) (release func(), err error) {
	a.mu.Lock()
	s := a.held[account]
	if s == nil {
		s = &slots{places: make(chan struct{}, a.limit)}
		a.held[account] = s
	}
	s.users++
	a.mu.Unlock()
	select {
	case s.places <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-s.places
				a.leave(account, s)
			})
		}, nil
	case <-ctx.Done():
		a.leave(account, s)
		return nil, ctx.Err()
	}
}

func (a *accountSlots) leave(account string, s *slots) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(a.held, account)
	}
}

// accounts is the number of accounts holding or waiting for a place.
func (a *accountSlots) accounts() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.held)
}
