package sqlstore

import (
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// A batch's ledger entries share one string for their ids, references
// and notes; each must come out as it would on its own, skipping the
// records that are not charged.
func TestChargeTextsMatchEachCharge(t *testing.T) {
	const at = 0x1234_5678_9abc
	records := []storage.UsageRecord{
		{AccountID: "a", RequestID: "r-1", Model: "svc-3", PromptTokens: 12, CompletionTokens: 345},
		{AccountID: "gone", RequestID: "r-2", Model: "x"},
		{AccountID: "a", RequestID: "", Model: "bad"},
		{AccountID: "a", RequestID: "r-4", Model: "m", PromptTokens: -9223372036854775808, CompletionTokens: 9223372036854775807},
	}
	out := make([]storage.Settlement, len(records))
	out[2].Err = checkUsage(records[2])
	heads := map[string]*ledgerHead{"a": {}, "gone": nil}
	text, ends := chargeTexts(records, out, heads, at)
	seen := map[string]bool{}
	for i := range chargeable(records, out, heads) {
		u := records[i]
		refEnd, noteEnd := ends[0], ends[1]
		id, ref, note := text[:chargeIDLen], text[chargeIDLen:refEnd], text[refEnd:noteEnd]
		text, ends = text[noteEnd:], ends[2:]
		if !strings.HasPrefix(id, "le_0000123456789abc") || seen[id] {
			t.Errorf("record %d: id %q", i, id)
		}
		seen[id] = true
		if ref != storage.ChargeReferencePrefix+u.RequestID || note != chargeNote(u) {
			t.Errorf("record %d: reference %q, note %q", i, ref, note)
		}
	}
	if len(seen) != 2 || text != "" || len(ends) != 0 {
		t.Errorf("%d entries, %q and %d ends left over", len(seen), text, len(ends))
	}
}

// Each request log entry's id starts with its own time.
func TestRequestLogArgsIDs(t *testing.T) {
	base := time.UnixMicro(0x1234_5678_9abc)
	entries := []storage.RequestLogEntry{{At: base}, {At: base.Add(time.Microsecond)}, {At: time.Time{}}}
	args := requestLogArgs(entries)
	defer putArgs(args)
	for i, e := range entries {
		id := (*args)[i*requestLogColumnCount].(string)
		if want := newTimeID(requestLogIDPrefix, micros(e.At)); id[:len(id)-12] != want[:len(want)-12] || len(id) != len(want) {
			t.Errorf("entry %d: id %q, want %q and 12 more", i, id, want[:len(want)-12])
		}
		if at := (*args)[i*requestLogColumnCount+3]; at != micros(e.At) {
			t.Errorf("entry %d: at %v", i, at)
		}
	}
}
