package admin

import (
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// countingSink counts the bytes a logger writes.
type countingSink struct{ n atomic.Int64 }

func (c *countingSink) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }
func (c *countingSink) Sync() error                 { return nil }

// dirBytes sums the sizes of the files below dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefusalFloodDoesNotGrowStoreOrLog sends what filled a disk before:
// 300 requests with a 100 KB path segment and a genuine account token,
// each refused (the token may not manage that "account"). The store and
// the log together may grow by what a few clipped entries take, not by
// the megabytes sent.
func TestRefusalFloodDoesNotGrowStoreOrLog(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "switchyard.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v, err := NewVerifier(VerifierConfig{Secret: testSecret, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	sink := new(countingSink)
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), sink, zap.InfoLevel))
	h, err := New(Config{Store: st, Verifier: v, Logger: logger, Limiter: limits.NewLocal(limits.LocalConfig{}),
		TokenRate: DefaultTokenRate, AddressRate: DefaultAddressRate})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: st, h: h, alice: hs256(t, testSecret, claims(map[string]any{"sub": "alice-owner"}))}
	if _, err := st.EnsureAccount(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	// Let the database reach its working size before measuring.
	f.want(f.do("GET", "/admin/accounts/nobody", f.alice, ""), 404, "account_not_found")
	h.Close()
	before := dirBytes(t, dir)
	logBefore := sink.n.Load()

	segment := strings.Repeat("a", 100_000)
	var refused int
	for range 300 {
		r := f.do("GET", "/admin/accounts/"+segment+"/keys", f.alice, "")
		if r.status != 404 && r.status != 429 {
			t.Fatalf("got %d %.200s, want 404 or 429", r.status, r.body)
		}
		refused++
	}
	h.Close()
	grown, logged := dirBytes(t, dir)-before, sink.n.Load()-logBefore
	t.Logf("%d refusals: the store grew by %d bytes, the log by %d", refused, grown, logged)
	const most = 1 << 20
	if grown > most || logged > most {
		t.Errorf("%d refused requests grew the store by %d bytes and the log by %d; want at most %d each", refused, grown, logged, most)
	}
	entries, err := st.AuditEntries(t.Context(), storage.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Account) > 1000 || len(e.Target) > 1000 || len(e.Detail) > 1000 {
			t.Errorf("audit entry %s holds %d, %d and %d bytes of account, target and detail", e.ID, len(e.Account), len(e.Target), len(e.Detail))
		}
	}
}
