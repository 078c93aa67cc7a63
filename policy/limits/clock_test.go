package limits

import (
	"time"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
)

// newFakeClock returns a clock the test moves by hand, started at a fixed
// instant so that window boundaries fall in the same place on every run.
func newFakeClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}
