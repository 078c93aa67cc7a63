package sqlstore

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// recordingTx keeps the statements run on it.
type recordingTx struct {
	Tx
	queries []string
	args    [][]any
}

func (r *recordingTx) Exec(_ context.Context, q string, args ...any) (int64, error) {
	r.queries = append(r.queries, q)
	r.args = append(r.args, slices.Clone(args))
	return 1, nil
}

// The values a chunk's rows all have in one column are bound once, as
// numbered parameters named first; the rest keep a parameter a row. On
// PostgreSQL the numbers go on from the shared ones.
func TestInsertRowsBindsSharedValuesOnce(t *testing.T) {
	columns := []string{"id", "account", "n", "note"}
	rows := [][]any{
		{"id-1", "acct", int64(1), ""},
		{"id-2", "acct", int64(2), ""},
		{"id-3", "acct", int64(3), ""},
		{"id-4", "acct", int64(4), ""},
	}
	var args []any
	for _, r := range rows {
		args = append(args, r...)
	}
	for _, tc := range []struct {
		name       string
		positional bool
		want       string
	}{
		{"sqlite", true, "INSERT INTO shared_test (account, note, id, n) VALUES " +
			"(?1, ?2, ?, ?), (?1, ?2, ?, ?), (?1, ?2, ?, ?), (?1, ?2, ?, ?)"},
		{"postgres", false, "INSERT INTO shared_test (account, note, id, n) VALUES " +
			"($1, $2, $3, $4), ($1, $2, $5, $6), ($1, $2, $7, $8), ($1, $2, $9, $10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := &recordingTx{}
			if err := insertRows(t.Context(), tx, "shared_test", columns, tc.positional, args); err != nil {
				t.Fatal(err)
			}
			if len(tx.queries) != 1 || tx.queries[0] != tc.want {
				t.Fatalf("statements %q, want %q", tx.queries, tc.want)
			}
			want := []any{"acct", "", "id-1", int64(1), "id-2", int64(2), "id-3", int64(3), "id-4", int64(4)}
			if !slices.Equal(tx.args[0], want) {
				t.Errorf("arguments %v, want %v", tx.args[0], want)
			}
		})
	}
}

// A row alone, or rows that share nothing, bind every value.
func TestInsertRowsWithoutSharedValues(t *testing.T) {
	columns := []string{"id", "n"}
	tx := &recordingTx{}
	args := []any{"a", int64(1), "b", int64(2), "c", int64(3), "d", int64(4), "e", int64(5)}
	if err := insertRows(t.Context(), tx, "unshared_test", columns, true, args); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"INSERT INTO unshared_test (id, n) VALUES (?, ?), (?, ?), (?, ?), (?, ?)",
		"INSERT INTO unshared_test (id, n) VALUES (?, ?)",
	}
	if !slices.Equal(tx.queries, want) {
		t.Errorf("statements %q, want %q", tx.queries, want)
	}
	if !slices.Equal(tx.args[0], args[:8]) || !slices.Equal(tx.args[1], args[8:]) {
		t.Errorf("arguments %v", tx.args)
	}
}

// Only values of one type and equal compare the same; a value of
// another type is never compared, so a type that cannot be does not
// panic.
func TestSameArg(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		want bool
	}{
		{"x", "x", true}, {"x", "y", false}, {"", nil, false}, {nil, nil, true},
		{int64(1), int64(1), true}, {int64(1), 1, false}, {true, true, true}, {true, false, false},
		{[]byte("x"), []byte("x"), false}, {1.5, 1.5, false},
	} {
		if got := sameArg(tc.a, tc.b); got != tc.want {
			t.Errorf("sameArg(%#v, %#v) = %v", tc.a, tc.b, got)
		}
	}
}

// Each set of shared columns is a statement of its own: past
// maxSharedShapes of a table and row count, a chunk shares the largest
// set in use that it can, or nothing.
func TestSharedColumnsBounded(t *testing.T) {
	const cols, rows = 12, 2
	chunk := func(same uint64) []any {
		c := make([]any, cols*rows)
		for r := range rows {
			for col := range cols {
				v := int64(col)
				if same&(1<<col) == 0 {
					v = int64(100*r + col)
				}
				c[r*cols+col] = v
			}
		}
		return c
	}
	table := "bounded_" + strings.ReplaceAll(t.Name(), "/", "_")
	for i := range maxSharedShapes {
		same := uint64(1) << i
		if got := sharedColumns(table, chunk(same), cols, rows); got != same {
			t.Fatalf("shape %d: shared %b, want %b", i, got, same)
		}
	}
	// A new set is not prepared: the largest in use within it serves.
	if got := sharedColumns(table, chunk(1<<1|1<<10|1<<11), cols, rows); got != 1<<1 {
		t.Errorf("shared %b, want %b", got, 1<<1)
	}
	if got := sharedColumns(table, chunk(1<<11), cols, rows); got != 0 {
		t.Errorf("shared %b, want none", got)
	}
	// Sets in use still serve.
	if got := sharedColumns(table, chunk(1<<3), cols, rows); got != 1<<3 {
		t.Errorf("shared %b, want %b", got, 1<<3)
	}
}

// A column is the same in every row only where each row has the first
// row's value, of its type.
func TestSameInColumn(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []any // two columns, the first is checked
		want bool
	}{
		{"strings", []any{"a", 1, "a", 2, "a", 3}, true},
		{"a string differs", []any{"a", 1, "a", 2, "b", 3}, false},
		{"ints", []any{int64(7), "x", int64(7), "y"}, true},
		{"an int of another type", []any{int64(7), "x", 7, "y"}, false},
		{"bools", []any{true, 0, true, 0}, true},
		{"nils", []any{nil, 0, nil, 0}, true},
		{"empty and nil", []any{"", 0, nil, 0}, false},
		{"bytes never", []any{[]byte("a"), 0, []byte("a"), 0}, false},
	} {
		if got := sameInColumn(tc.vals, 2); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A batch's rows go in grouped by account, each account's in the order
// they came, so that an account's rows share its id; rows in that order
// already are used as they are.
func TestInsertRowsGroupedByAccount(t *testing.T) {
	columns := []string{"id", "account_id"}
	args := []any{"r1", "acct_b", "r2", "acct_a", "r3", "acct_b", "r4", "acct_a"}
	tx := &recordingTx{}
	if err := insertRows(t.Context(), tx, "grouped_test", columns, true, args); err != nil {
		t.Fatal(err)
	}
	want := []any{"r2", "acct_a", "r4", "acct_a", "r1", "acct_b", "r3", "acct_b"}
	if len(tx.queries) != 1 || !slices.Equal(tx.args[0], want) {
		t.Errorf("statements %q with %v, want one with %v", tx.queries, tx.args, want)
	}
	if got := groupByAccount([]any{"r1", "a", "r2", "a", "r3", "b"}, columns); got != nil {
		t.Errorf("rows in account order regrouped: %v", *got)
	}
	if got := groupByAccount(args, []string{"id", "other"}); got != nil {
		t.Errorf("rows without an account regrouped: %v", *got)
	}
}
