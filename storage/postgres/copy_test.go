package postgres

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// copyRows writes what pgx's CopyFrom writes, for the kinds of values
// the ledger writer sends (text, bigint, boolean, NULL, a number as
// text), over a batch larger than one COPY message.
func TestCopyRowsAsCopyFrom(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, table := range []string{"by_pgx", "by_copy_rows"} {
		if _, err := conn.Exec(ctx, `CREATE TABLE `+table+` (n BIGINT NOT NULL, s TEXT NOT NULL, b BOOLEAN NOT NULL,
			o TEXT, m BIGINT, "Odd name" TEXT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
	}
	columns := []string{"n", "s", "b", "o", "m", "Odd name"}
	var rows [][]any
	for i := range 3000 {
		var opt any
		if i%3 == 0 {
			opt = fmt.Sprint("opt ", i)
		}
		rows = append(rows, []any{int64(i) - 1500, strings.Repeat("é", i%40), i%2 == 0, opt, fmt.Sprint(i * 7), "x"})
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"by_pgx"}, columns, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time with the description prepared
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := txn{tx: tx, prepares: true}.CopyRows(ctx, "by_copy_rows", columns, rows)
		if err != nil || n != int64(len(rows)) {
			t.Fatalf("CopyRows: %d rows, %v", n, err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	read := func(table string) [][]any {
		got, err := conn.Query(ctx, `SELECT n, s, b, o, m, "Odd name" FROM `+table+` ORDER BY n`)
		if err != nil {
			t.Fatal(err)
		}
		all, err := pgx.CollectRows(got, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	want, got := read("by_pgx"), read("by_copy_rows")
	if len(got) != 2*len(want) {
		t.Fatalf("%d rows, want %d", len(got), 2*len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[2*i], want[i]) || !reflect.DeepEqual(got[2*i+1], want[i]) {
			t.Fatalf("row %v, %v, want %v", got[2*i], got[2*i+1], want[i])
		}
	}
	if _, err := copyRows(ctx, conn, true, "by_pgx", columns, [][]any{{int64(1)}}); err == nil {
		t.Error("a row of the wrong width was copied")
	}
}

// On a connection in another query mode than the default, copyRows is
// pgx's CopyFrom: a pooler may keep no prepared statement.
func TestCopyRowsInSimpleProtocol(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE t (n BIGINT NOT NULL, s TEXT)`); err != nil {
		t.Fatal(err)
	}
	if n, err := copyRows(ctx, conn, preparesStatements(cfg), "t", []string{"n", "s"}, [][]any{{int64(1), "a"}, {int64(2), nil}}); err != nil || n != 2 {
		t.Fatalf("%d rows, %v", n, err)
	}
	var prepared int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements`).Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	if prepared != 0 {
		t.Errorf("%d statements prepared", prepared)
	}
}
