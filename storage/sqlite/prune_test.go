package sqlite

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// The sweep prunes account by account in chunks; each chunk goes on
// from the account the one before stopped in, so that a sweep sends a
// few statements an account and a chunk, not one an account for every
// chunk.
func TestPruneRequestLogResumesAcrossChunks(t *testing.T) {
	ctx := t.Context()
	_, r, s := recordedStore(t)
	defer s.Close()
	const accounts, old, chunk = 40, 3, 10
	base := time.Date(2031, 3, 14, 15, 0, 0, 0, time.UTC)
	var entries []storage.RequestLogEntry
	for a := range accounts {
		for i := range old + 1 {
			entries = append(entries, storage.RequestLogEntry{AccountID: fmt.Sprintf("acct_%03d", a),
				At: base.Add(time.Duration(i) * time.Minute), RequestID: fmt.Sprintf("r-%d-%d", a, i)})
		}
	}
	if err := s.AppendRequestLog(ctx, entries); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.stmts = nil
	r.mu.Unlock()
	cut := base.Add(old * time.Minute)
	var total int64
	chunks := 0
	for {
		n, err := s.PruneRequestLog(ctx, cut, chunk)
		if err != nil {
			t.Fatal(err)
		}
		total, chunks = total+n, chunks+1
		if n < chunk {
			break
		}
	}
	if total != accounts*old {
		t.Errorf("the sweep pruned %d entries, want %d", total, accounts*old)
	}
	var deletes, reads int
	for _, st := range r.stmts {
		if strings.HasPrefix(strings.TrimSpace(st.sql), "DELETE") {
			deletes++
		} else {
			reads++
		}
	}
	// An account is found once and takes two DELETEs (the times before
	// the epoch and after), and the account a chunk stops in is found
	// again by the next; starting every chunk from the first account
	// would find about chunks*accounts/2 of them.
	if limit := accounts + chunks + 1; reads > limit || deletes > 2*limit {
		t.Errorf("a sweep of %d accounts in %d chunks sent %d reads and %d DELETEs; want at most %d and %d",
			accounts, chunks, reads, deletes, limit, 2*limit)
	}
	for a := range accounts {
		left, err := s.RequestLogPage(ctx, fmt.Sprintf("acct_%03d", a), storage.RequestLogQuery{})
		if err != nil || len(left) != 1 || !left[0].At.Equal(cut) {
			t.Errorf("acct_%03d after the sweep: %+v, %v; want the entry at the cut alone", a, left, err)
		}
	}
}
