package billing

import (
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/duration"
)

// Unset settings keep the writer's defaults; a max_delay of 0 is kept as
// 0, which commits at once, not taken for unset.
func TestLedgerSettingsWriterConfig(t *testing.T) {
	if got := (*LedgerSettings)(nil).WriterConfig(); got.MaxDelay != DefaultMaxDelay || got.RequestLogRetention != DefaultRequestLogRetention {
		t.Errorf("defaults: %+v", got)
	}
	zero := duration.Duration(0)
	got := (&LedgerSettings{MaxDelay: &zero, MaxBatch: 7, RequestLogDays: 2}).WriterConfig()
	if got.MaxDelay != 0 || got.MaxBatch != 7 || got.RequestLogRetention != 48*time.Hour {
		t.Errorf("configured: %+v", got)
	}
	neg := duration.Duration(-1)
	if (&LedgerSettings{MaxDelay: &neg}).Validate() == nil || (&LedgerSettings{Queue: -1}).Validate() == nil {
		t.Error("negative settings passed")
	}
}
