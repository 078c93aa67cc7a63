package sqlite

import (
	"database/sql"
	"net"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// A write transaction no client waits for lets a goroutine whose
// connection became readable run within a statement or two, where the
// process has one processor: there, a goroutine that only yields keeps
// the scheduler from polling the network until it is done (the system
// monitor polls it after 10 ms, well after the hundred statements).
func TestUnhurriedTransactionLetsTheNetworkIn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	d := testDriver(t)
	ctx := t.Context()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	var woke atomic.Bool
	go func() {
		var b [1]byte
		if n, _ := server.Read(b[:]); n == 1 {
			woke.Store(true)
		}
	}()
	time.Sleep(10 * time.Millisecond) // the reader parks in the netpoller

	unhurried := storage.Unhurried(ctx)
	tx, err := d.Begin(unhurried)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := client.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	statements := 0
	for !woke.Load() && statements < 100 {
		if _, err := tx.Exec(unhurried, `INSERT INTO t (n) VALUES (?)`, statements); err != nil {
			t.Fatal(err)
		}
		statements++
	}
	if statements > 3 {
		t.Errorf("the reader ran after %d statements (woke: %v), want at most 3", statements, woke.Load())
	}
}

// Unhurried work does not park while a transaction of the process waits
// for the write lock: it would keep that one waiting, up to a millisecond
// a statement where nothing else runs.
func TestUnhurriedWorkDoesNotParkWhileAWriterWaits(t *testing.T) {
	d := testDriver(t)
	var parks atomic.Int32
	d.park = func() { parks.Add(1); parkUnhurried() }
	ctx := t.Context()
	unhurried := storage.Unhurried(ctx)
	tx, err := d.Begin(unhurried)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(unhurried, `INSERT INTO t (n) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if parks.Load() != 1 {
		t.Fatalf("%d parks before a statement with no one waiting, want 1", parks.Load())
	}
	other := make(chan error, 1)
	go func() {
		tx, err := d.Begin(ctx)
		if err == nil {
			err = tx.Rollback(ctx)
		}
		other <- err
	}()
	for d.waiting.Load() == 0 {
		runtime.Gosched()
	}
	for n := range 10 {
		if _, err := tx.Exec(unhurried, `INSERT INTO t (n) VALUES (?)`, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(unhurried); err != nil {
		t.Fatal(err)
	}
	if parks.Load() != 1 {
		t.Errorf("%d parks in all, want none after the other transaction began to wait", parks.Load())
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
}

// testDriver is the store's driver on a database of its own with a table
// t (n INTEGER).
func testDriver(t *testing.T) *driver {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "y.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := &driver{db: db, querier: querier{q: db}, writer: make(chan struct{}, 1), park: parkUnhurried}
	if _, err := d.Exec(t.Context(), `CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return d
}
