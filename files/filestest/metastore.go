// Package filestest is the contract suite every storage.FileMeta passes,
// in-memory or SQL.
package filestest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/storage"
)

// T0 is the suite's epoch. Times are whole seconds, which every SQL
// timestamp type holds exactly.
var T0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// Run runs the suite. open returns an empty store per subtest and
// registers its own cleanup with t. The suite names accounts ("acct",
// "alice", ...); if the store is also an AccountMaker, it creates them
// through it and uses their ids, otherwise it uses the names as ids.
func Run(t *testing.T, open func(t *testing.T) storage.FileMeta) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.FileMeta)
	}{
		{"pending is invisible", testPendingInvisible},
		{"commit makes visible", testCommit},
		{"commit refusals", testCommitRefusals},
		{"accounts are isolated", testIsolation},
		{"expiry hides at once", testExpiry},
		{"quota files", testQuotaFiles},
		{"quota bytes", testQuotaBytes},
		{"quota exact under concurrency", testQuotaConcurrent},
		{"list order and cursor", testList},
		{"list purpose filter", testListPurpose},
		{"expire is a one-shot delete", testExpire},
		{"expired and remove", testExpiredRemove},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			if a, ok := s.(AccountMaker); ok {
				s = &namedAccounts{FileMeta: s, accounts: a}
			}
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

// newFile returns a pending file of account created at T0+offset with a
// one-hour lease.
func newFile(account string, offset time.Duration) storage.File {
	at := T0.Add(offset)
	return storage.File{
		ID:        files.NewID(at),
		AccountID: account,
		Source:    storage.FileUploaded,
		CreatedAt: at,
		ExpiresAt: at.Add(time.Hour),
		Pending:   true,
	}
}

// committed returns f as Commit takes it, expiring after 30 days.
func committed(f storage.File, bytes int64, purpose string) storage.File {
	f.Pending = false
	f.Filename = "report " + f.ID[len(f.ID)-4:] + ".pdf"
	f.Purpose = purpose
	f.Bytes = bytes
	f.MIME = "application/pdf"
	f.SHA256 = fmt.Sprintf("%064x", bytes)
	f.ExpiresAt = f.CreatedAt.Add(30 * 24 * time.Hour)
	return f
}

// store begins and commits a file of account at T0+offset.
func store(t *testing.T, s storage.FileMeta, account string, offset time.Duration, bytes int64, purpose string) storage.File {
	t.Helper()
	f := newFile(account, offset)
	if err := s.Begin(ctx, f); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	c := committed(f, bytes, purpose)
	if err := s.Commit(ctx, c, storage.FileQuota{}, f.CreatedAt); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return c
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("%s: error = %v, want ErrNotFound", what, err)
	}
}

func sameFile(t *testing.T, got, want storage.File) {
	t.Helper()
	if !got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("times: got created %v expires %v, want %v, %v", got.CreatedAt, got.ExpiresAt, want.CreatedAt, want.ExpiresAt)
	}
	got.CreatedAt, got.ExpiresAt = want.CreatedAt, want.ExpiresAt
	if got != want {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func ids(fs []storage.File) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func testPendingInvisible(t *testing.T, s storage.FileMeta) {
	f := newFile("acct", 0)
	if err := s.Begin(ctx, f); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, "acct", f.ID, T0)
	wantNotFound(t, "Get(pending)", err)
	if l, err := s.List(ctx, "acct", storage.FileListParams{Limit: 10}, T0); err != nil || len(l) != 0 {
		t.Fatalf("List = %v, %v; want nothing", ids(l), err)
	}
	if u, err := s.Usage(ctx, "acct", T0); err != nil || u != (storage.FileUsage{}) {
		t.Fatalf("Usage = %+v, %v; want zero", u, err)
	}
	_, err = s.Expire(ctx, "acct", f.ID, T0)
	wantNotFound(t, "Expire(pending)", err)
}

func testCommit(t *testing.T, s storage.FileMeta) {
	f := store(t, s, "acct", 0, 1234, "assistants")
	got, err := s.Get(ctx, "acct", f.ID, T0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got, f)

	g := newFile("acct", time.Second)
	g.Source = storage.FileGenerated
	if err := s.Begin(ctx, g); err != nil {
		t.Fatal(err)
	}
	gc := committed(g, 10, "user_data")
	gc.Flagged = true
	if err := s.Commit(ctx, gc, storage.FileQuota{}, T0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(ctx, "acct", g.ID, T0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got, gc)
	if u, err := s.Usage(ctx, "acct", T0.Add(time.Minute)); err != nil || u != (storage.FileUsage{Files: 2, Bytes: 1244}) {
		t.Fatalf("Usage = %+v, %v; want 2 files, 1244 bytes", u, err)
	}
}

func testCommitRefusals(t *testing.T, s storage.FileMeta) {
	f := newFile("acct", 0)
	if err := s.Begin(ctx, f); err != nil {
		t.Fatal(err)
	}
	c := committed(f, 1, "assistants")

	other := c
	other.AccountID = "intruder"
	wantNotFound(t, "Commit by another account", s.Commit(ctx, other, storage.FileQuota{}, T0))
	wantNotFound(t, "Commit after the lease", s.Commit(ctx, c, storage.FileQuota{}, f.ExpiresAt))
	missing := committed(newFile("acct", time.Second), 1, "assistants")
	wantNotFound(t, "Commit without Begin", s.Commit(ctx, missing, storage.FileQuota{}, T0))

	if err := s.Commit(ctx, c, storage.FileQuota{}, T0); err != nil {
		t.Fatalf("Commit within the lease: %v", err)
	}
	wantNotFound(t, "second Commit", s.Commit(ctx, c, storage.FileQuota{}, T0))
}

func testIsolation(t *testing.T, s storage.FileMeta) {
	a := store(t, s, "alice", 0, 5, "assistants")
	store(t, s, "bob", time.Second, 7, "assistants")
	_, err := s.Get(ctx, "bob", a.ID, T0)
	wantNotFound(t, "Get of another account's file", err)
	_, err = s.Expire(ctx, "bob", a.ID, T0)
	wantNotFound(t, "Expire of another account's file", err)
	l, err := s.List(ctx, "bob", storage.FileListParams{Limit: 10}, T0)
	if err != nil || len(l) != 1 || l[0].AccountID != "bob" {
		t.Fatalf("List(bob) = %v, %v; want bob's one file", ids(l), err)
	}
	if _, err := s.Get(ctx, "alice", a.ID, T0); err != nil {
		t.Fatalf("owner's Get after another account's Expire attempt: %v", err)
	}
}

func testExpiry(t *testing.T, s storage.FileMeta) {
	f := store(t, s, "acct", 0, 5, "assistants")
	before := f.ExpiresAt.Add(-time.Second)
	if _, err := s.Get(ctx, "acct", f.ID, before); err != nil {
		t.Fatalf("Get a second before expiry: %v", err)
	}
	_, err := s.Get(ctx, "acct", f.ID, f.ExpiresAt)
	wantNotFound(t, "Get at expiry", err)
	if l, _ := s.List(ctx, "acct", storage.FileListParams{Limit: 10}, f.ExpiresAt); len(l) != 0 {
		t.Fatalf("List at expiry = %v, want nothing", ids(l))
	}
	if u, _ := s.Usage(ctx, "acct", f.ExpiresAt); u != (storage.FileUsage{}) {
		t.Fatalf("Usage at expiry = %+v, want zero", u)
	}
	_, err = s.Expire(ctx, "acct", f.ID, f.ExpiresAt)
	wantNotFound(t, "Expire at expiry", err)
}

func testQuotaFiles(t *testing.T, s storage.FileMeta) {
	q := storage.FileQuota{MaxFiles: 2}
	for i := range 2 {
		f := newFile("acct", time.Duration(i)*time.Second)
		s.Begin(ctx, f)
		if err := s.Commit(ctx, committed(f, 1, "assistants"), q, T0.Add(time.Minute)); err != nil {
			t.Fatalf("Commit %d within quota: %v", i, err)
		}
	}
	f := newFile("acct", 2*time.Second)
	s.Begin(ctx, f)
	if err := s.Commit(ctx, committed(f, 1, "assistants"), q, T0.Add(time.Minute)); !errors.Is(err, storage.ErrTooManyFiles) {
		t.Fatalf("third Commit: error = %v, want ErrTooManyFiles", err)
	}
	// A refused commit leaves the row pending, still committable.
	if err := s.Commit(ctx, committed(f, 1, "assistants"), storage.FileQuota{}, T0.Add(time.Minute)); err != nil {
		t.Fatalf("Commit without quota after a refusal: %v", err)
	}
	// Another account has its own room.
	g := newFile("other", 0)
	s.Begin(ctx, g)
	if err := s.Commit(ctx, committed(g, 1, "assistants"), q, T0.Add(time.Minute)); err != nil {
		t.Fatalf("other account's Commit: %v", err)
	}
	// Expired files leave room.
	late := T0.Add(31 * 24 * time.Hour)
	h := newFile("acct", 31*24*time.Hour-time.Second)
	s.Begin(ctx, h)
	if err := s.Commit(ctx, committed(h, 1, "assistants"), q, late); err != nil {
		t.Fatalf("Commit after the others expired: %v", err)
	}
}

func testQuotaBytes(t *testing.T, s storage.FileMeta) {
	q := storage.FileQuota{MaxBytes: 100}
	f := newFile("acct", 0)
	s.Begin(ctx, f)
	if err := s.Commit(ctx, committed(f, 60, "assistants"), q, T0); err != nil {
		t.Fatal(err)
	}
	g := newFile("acct", time.Second)
	s.Begin(ctx, g)
	if err := s.Commit(ctx, committed(g, 41, "assistants"), q, T0); !errors.Is(err, storage.ErrTooManyBytes) {
		t.Fatalf("Commit over the byte quota: error = %v, want ErrTooManyBytes", err)
	}
	if err := s.Commit(ctx, committed(g, 40, "assistants"), q, T0); err != nil {
		t.Fatalf("Commit exactly at the byte quota: %v", err)
	}
}

func testQuotaConcurrent(t *testing.T, s storage.FileMeta) {
	const workers, room = 24, 5
	q := storage.FileQuota{MaxFiles: room, MaxBytes: 1 << 40}
	pending := make([]storage.File, workers)
	for i := range pending {
		pending[i] = newFile("acct", time.Duration(i)*time.Millisecond)
		if err := s.Begin(ctx, pending[i]); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, full int
		other    []error
	)
	start := make(chan struct{})
	for i := range workers {
		wg.Go(func() {
			<-start
			err := s.Commit(ctx, committed(pending[i], 1, "assistants"), q, T0.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, storage.ErrTooManyFiles):
				full++
			default:
				other = append(other, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected Commit errors: %v", other)
	}
	if ok != room || full != workers-room {
		t.Fatalf("%d commits succeeded and %d were refused, want %d and %d", ok, full, room, workers-room)
	}
	if u, _ := s.Usage(ctx, "acct", T0.Add(time.Minute)); u.Files != room {
		t.Fatalf("Usage = %+v, want %d files", u, room)
	}

	// The same with bytes: room for 3 files of 30 bytes in 100.
	qb := storage.FileQuota{MaxBytes: 100}
	var okb int
	var errs []error
	for i := range 10 {
		f := newFile("bytes", time.Duration(i)*time.Millisecond)
		s.Begin(ctx, f)
		wg.Go(func() {
			err := s.Commit(ctx, committed(f, 30, "assistants"), qb, T0.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				okb++
			} else if !errors.Is(err, storage.ErrTooManyBytes) {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 || okb != 3 {
		t.Fatalf("%d byte-bound commits succeeded (errors %v), want 3", okb, errs)
	}
}

func testList(t *testing.T, s storage.FileMeta) {
	var all []storage.File
	for i := range 5 {
		all = append(all, store(t, s, "acct", time.Duration(i)*time.Second, 1, "assistants"))
	}
	now := T0.Add(time.Minute)
	asc := ids(all)
	desc := slices.Clone(asc)
	slices.Reverse(desc)
	tests := []struct {
		name string
		p    storage.FileListParams
		want []string
	}{
		{"asc", storage.FileListParams{Limit: 10, Order: storage.FileOrderAsc}, asc},
		{"desc", storage.FileListParams{Limit: 10, Order: storage.FileOrderDesc}, desc},
		{"default order is desc", storage.FileListParams{Limit: 10}, desc},
		{"limit", storage.FileListParams{Limit: 2, Order: storage.FileOrderAsc}, asc[:2]},
		{"after asc", storage.FileListParams{Limit: 10, Order: storage.FileOrderAsc, After: asc[1]}, asc[2:]},
		{"after desc", storage.FileListParams{Limit: 2, Order: storage.FileOrderDesc, After: desc[1]}, desc[2:4]},
		{"after last", storage.FileListParams{Limit: 10, Order: storage.FileOrderAsc, After: asc[4]}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.List(ctx, "acct", tc.p, now)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("List(%+v) = %v, want %v", tc.p, ids(got), tc.want)
			}
		})
	}
	// A cursor stays valid after its file is deleted.
	if _, err := s.Expire(ctx, "acct", asc[2], now); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx, "acct", storage.FileListParams{Limit: 10, Order: storage.FileOrderAsc, After: asc[2]}, now)
	if err != nil || !slices.Equal(ids(got), asc[3:]) {
		t.Fatalf("List after a deleted cursor = %v, %v; want %v", ids(got), err, asc[3:])
	}
}

func testListPurpose(t *testing.T, s storage.FileMeta) {
	a := store(t, s, "acct", 0, 1, "assistants")
	store(t, s, "acct", time.Second, 1, "user_data")
	c := store(t, s, "acct", 2*time.Second, 1, "assistants")
	got, err := s.List(ctx, "acct", storage.FileListParams{Limit: 10, Order: storage.FileOrderAsc, Purpose: "assistants"}, T0.Add(time.Minute))
	if err != nil || !slices.Equal(ids(got), []string{a.ID, c.ID}) {
		t.Fatalf("List(purpose=assistants) = %v, %v; want %v", ids(got), err, []string{a.ID, c.ID})
	}
}

func testExpire(t *testing.T, s storage.FileMeta) {
	f := store(t, s, "acct", 0, 9, "assistants")
	now := T0.Add(time.Hour)
	got, err := s.Expire(ctx, "acct", f.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got, f)
	_, err = s.Get(ctx, "acct", f.ID, now)
	wantNotFound(t, "Get after Expire", err)
	_, err = s.Expire(ctx, "acct", f.ID, now)
	wantNotFound(t, "second Expire", err)
	exp, err := s.Expired(ctx, now, 10)
	if err != nil || !slices.Equal(ids(exp), []string{f.ID}) {
		t.Fatalf("Expired = %v, %v; want the expired file", ids(exp), err)
	}
}

func testExpiredRemove(t *testing.T, s storage.FileMeta) {
	live := store(t, s, "acct", 0, 1, "assistants")      // expires T0+30d
	old := store(t, s, "acct", -29*24*time.Hour, 1, "x") // expires T0+1d
	crashed := newFile("acct", 0)                        // lease ends T0+1h
	if err := s.Begin(ctx, crashed); err != nil {
		t.Fatal(err)
	}
	inFlight := newFile("acct", 47*time.Hour) // lease ends T0+48h
	if err := s.Begin(ctx, inFlight); err != nil {
		t.Fatal(err)
	}
	now := T0.Add(47 * time.Hour)

	exp, err := s.Expired(ctx, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{crashed.ID, old.ID}; !slices.Equal(ids(exp), want) {
		t.Fatalf("Expired = %v, want %v (oldest ExpiresAt first)", ids(exp), want)
	}
	if exp, _ := s.Expired(ctx, now, 1); len(exp) != 1 {
		t.Fatalf("Expired(limit 1) returned %d rows", len(exp))
	}

	for _, id := range []string{crashed.ID, old.ID, live.ID, "file-missing"} {
		if err := s.Remove(ctx, id, now); err != nil {
			t.Fatalf("Remove(%s): %v", id, err)
		}
	}
	if exp, _ := s.Expired(ctx, now, 10); len(exp) != 0 {
		t.Fatalf("Expired after Remove = %v, want nothing", ids(exp))
	}
	if _, err := s.Get(ctx, "acct", live.ID, now); err != nil {
		t.Fatalf("Remove must not touch a visible file: Get: %v", err)
	}
	// Remove also discards a pending row, as a failed upload does.
	if err := s.Remove(ctx, inFlight.ID, now); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "Commit after Remove", s.Commit(ctx, committed(inFlight, 1, "assistants"), storage.FileQuota{}, now))
}
