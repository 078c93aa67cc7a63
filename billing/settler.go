package billing

import "github.com/switchyardhq/switchyard/storage"

// Settler settles the charges of one route. It hands each to the ledger
// writer and returns without waiting for the commit. The request's hold
// passes to the commit's completion: it is settled with the amount
// charged once the charge is committed, so that the next admission of
// the account sees the balance the charge left without reading the
// ledger, and never before the charge is durable. When the store failed,
// the charge may or may not have been written; the hold is settled with
// the price then, so that the balance the limiter mirrors errs on the
// low side.
type Settler struct {
	*Recorder
	// Committed, when set, is told of each charge once the ledger writer
	// is done with it: the amount charged, or the store's error. It runs
	// on the writer's goroutine.
	Committed func(rec storage.UsageRecord, charged int64, err error)
}

// HandedHold is a request's balance hold, taken away from the handlers
// that would release it (limits.Hold.Handover, whose limits.Handed it
// is), for a charge's completion to settle once with the amount
// charged. An interface where a function would be an allocation a
// charge: the limiter's Handed is a pointer's worth, boxed for free.
type HandedHold interface{ Settle(charged int64) }

// SettleHold hands rec to the ledger writer, and hold to the commit's
// completion. It returns rec's price, what the request is charged.
func (s Settler) SettleHold(rec storage.UsageRecord, hold HandedHold) int64 {
	return s.SettleHeld(&HeldCharge{Record: rec}, hold)
}

// A HeldCharge is a charge on its way to the ledger with the hold it
// settles once committed: the completion SettleHeld hands the ledger
// writer. A caller that keeps it in memory of its own, with the request,
// spares a charge the allocation of a completion made for it.
type HeldCharge struct {
	// Record is the charge, as the caller gives it to SettleHeld and
	// Committed is told of it.
	Record storage.UsageRecord

	committed func(storage.UsageRecord, int64, error)
	price     int64
	hold      HandedHold
}

// Complete settles the hold with what the ledger writer stored, or with
// the price when it could not store it (Completion).
func (c *HeldCharge) Complete(stored storage.UsageRecord, err error) {
	charged, err := settled(c.Record.RequestID, stored, err)
	completeHold(c.committed, c.Record, c.price, c.hold, charged, err)
}

// SettleHeld is SettleHold of c.Record, which must not change, nor c be
// reused, until the hold is settled. It returns the record's price.
func (s Settler) SettleHeld(c *HeldCharge, hold HandedHold) int64 {
	price := s.Price(c.Record)
	c.committed, c.price, c.hold = s.Committed, price, hold
	if s.Writer == nil {
		return s.Settle(c.Record, func(charged int64, err error) {
			completeHold(c.committed, c.Record, price, hold, charged, err)
		})
	}
	priced := c.Record
	priced.CostCents = price
	s.Writer.EnqueueTo(priced, c)
	return price
}

// completeHold tells committed of rec's charge, and settles the hold
// with the amount charged, or with the price when the charge failed.
func completeHold(committed func(storage.UsageRecord, int64, error), rec storage.UsageRecord, price int64,
	hold HandedHold, charged int64, err error) {
	if committed != nil {
		committed(rec, charged, err)
	}
	if err != nil {
		charged = price
	}
	hold.Settle(charged)
}
