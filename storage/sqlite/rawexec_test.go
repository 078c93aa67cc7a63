package sqlite

import (
	"context"
	"database/sql"
	"testing"
)

// count is the number of rows of the test driver's table t.
func count(t *testing.T, d *driver) int {
	t.Helper()
	var n int
	if err := d.QueryRow(t.Context(), `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func insertOne(t *testing.T, ctx context.Context, d *driver, v any) (*txn, error) {
	t.Helper()
	tx, err := d.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO t (n) VALUES (?)`, v)
	return tx.(*txn), err
}

// The statements that bypass database/sql run in the transaction, not
// beside it: what it rolls back is not written.
func TestRawExecIsInTheTransaction(t *testing.T) {
	d := testDriver(t)
	tx, err := insertOne(t, t.Context(), d, int64(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d); n != 0 {
		t.Fatalf("%d rows after a rollback; want 0", n)
	}
	tx, err = insertOne(t, t.Context(), d, int64(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d); n != 1 {
		t.Fatalf("%d rows after a commit; want 1", n)
	}
}

// A transaction whose context ends is rolled back by the store, and the
// connection serves the next one.
func TestRawExecContextEnded(t *testing.T) {
	d := testDriver(t)
	ctx, cancel := context.WithCancel(t.Context())
	tx, err := d.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO t (n) VALUES (?)`, int64(1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := tx.Exec(ctx, `INSERT INTO t (n) VALUES (?)`, int64(2)); err == nil {
		t.Error("a statement ran after its context ended")
	}
	_ = tx.Rollback(context.WithoutCancel(ctx))
	if n := count(t, d); n != 0 {
		t.Fatalf("%d rows of a transaction whose context ended; want 0", n)
	}
	tx2, err := insertOne(t, t.Context(), d, int64(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx2.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d); n != 1 {
		t.Fatalf("%d rows; want 1", n)
	}
}

// A write connection database/sql closed is replaced.
func TestWriteConnReopened(t *testing.T) {
	d := testDriver(t)
	tx, err := insertOne(t, t.Context(), d, int64(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := d.write.conn.Close(); err != nil {
		t.Fatal(err)
	}
	tx, err = insertOne(t, t.Context(), d, int64(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d); n != 2 {
		t.Fatalf("%d rows; want 2", n)
	}
}

type label string

// Arguments reach SQLite as database/sql would hand them: a named
// string type as its string, a named argument through database/sql.
func TestRawExecArguments(t *testing.T) {
	d := testDriver(t)
	ctx := t.Context()
	tx, err := d.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO t (n) VALUES (?)`, label("seven")); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO t (n) VALUES (:v)`, sql.Named("v", int64(8))); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO t (n) VALUES (?)`, struct{}{}); err == nil {
		t.Error("an argument of no SQL type was taken")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := d.Query(ctx, `SELECT typeof(n), CAST(n AS TEXT) FROM t ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var typ, v string
		if err := rows.Scan(&typ, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, typ+":"+v)
	}
	if len(got) != 2 || got[0] != "text:seven" || got[1] != "integer:8" {
		t.Errorf("stored %v; want [text:seven integer:8]", got)
	}
}
