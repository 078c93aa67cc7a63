package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// copyRows sends rows into table's columns with COPY in the binary
// format, as pgx's Conn.CopyFrom does, in a buffer used again from one
// batch to the next. CopyFrom encodes into a buffer that starts at 1 KiB
// on every call and grows by copying, through a pipe read by a goroutine
// of its own: for the ledger writer's batches, about 3 KB of garbage a
// charge. A connection configured for another query mode than pgx's
// default (a DSN's default_query_exec_mode, say for a pooler that keeps
// no prepared statements) copies with CopyFrom as that mode has it:
// prepares tells which (preparesStatements), decided once for a pool,
// since pgx's Conn.Config copies the whole configuration, maps and all,
// on every call.
func copyRows(ctx context.Context, conn *pgx.Conn, prepares bool, table string, columns []string, rows [][]any) (int64, error) {
	if !prepares {
		return conn.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
	}
	st := copyStatementsOf(table, columns)
	// Prepared once per connection, its name its text (Conn.Prepare):
	// the columns' types, which the binary format needs.
	sd, err := conn.Prepare(ctx, st.describe, st.describe)
	if err != nil {
		return 0, fmt.Errorf("statement description failed: %w", err)
	}
	if len(sd.Fields) != len(columns) {
		return 0, fmt.Errorf("%s: %d columns described, %d asked for", table, len(sd.Fields), len(columns))
	}
	buf := takeCopyBuf()
	defer putCopyBuf(buf)
	data := append((*buf)[:0], "PGCOPY\n\377\r\n\000"...)
	data = append(data, 0, 0, 0, 0, 0, 0, 0, 0) // flags, header extension
	types := conn.TypeMap()
	for _, row := range rows {
		if len(row) != len(columns) {
			return 0, fmt.Errorf("expected %d values, got %d values", len(columns), len(row))
		}
		data = appendInt16(data, int16(len(columns)))
		for i, v := range row {
			if data, err = appendCopyValue(types, data, sd.Fields[i].DataTypeOID, v); err != nil {
				return 0, err
			}
		}
	}
	*buf = data
	tag, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(data), st.copy)
	return tag.RowsAffected(), err
}

// preparesStatements tells whether connections of config keep the
// statements they prepare, which copyRows's own COPY needs.
func preparesStatements(config *pgx.ConnConfig) bool {
	return config.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement && config.StatementCacheCapacity > 0
}

// copyStatements are the statements copyRows sends for one table and
// its columns.
type copyStatements struct {
	columns  []string
	describe string // the columns' types
	copy     string // the COPY itself
}

// copyStatementsByTable keeps each table's copyStatements, made once:
// the ledger writer copies into the same few tables, the same columns,
// batch after batch.
var copyStatementsByTable sync.Map // table → *copyStatements

func copyStatementsOf(table string, columns []string) *copyStatements {
	if st, ok := copyStatementsByTable.Load(table); ok && slices.Equal(st.(*copyStatements).columns, columns) {
		return st.(*copyStatements)
	}
	quoted, cols := pgx.Identifier{table}.Sanitize(), quotedColumns(columns)
	st := &copyStatements{
		columns:  slices.Clone(columns),
		describe: "select " + cols + " from " + quoted,
		copy:     "copy " + quoted + " ( " + cols + " ) from stdin binary;",
	}
	copyStatementsByTable.Store(table, st)
	return st
}

// quotedColumns is columns quoted as identifiers, comma separated.
func quotedColumns(columns []string) string {
	var b strings.Builder
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgx.Identifier{c}.Sanitize())
	}
	return b.String()
}

// appendCopyValue appends v as a field of a binary COPY row: its length,
// -1 for NULL, then its bytes.
func appendCopyValue(types *pgtype.Map, data []byte, oid uint32, v any) ([]byte, error) {
	at := len(data)
	data = appendInt32(data, -1)
	encoded, err := types.Encode(oid, pgtype.BinaryFormatCode, v, data)
	if err != nil {
		if encoded, err = encodeThroughText(types, data, oid, v); err != nil {
			return nil, err
		}
	}
	if encoded == nil { // NULL
		return data, nil
	}
	n := int32(len(encoded) - at - 4)
	encoded[at], encoded[at+1], encoded[at+2], encoded[at+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return encoded, nil
}

// encodeThroughText encodes v, which has no binary form of the column's
// type, by reading its text as that type, as pgx's CopyFrom does.
func encodeThroughText(types *pgtype.Map, data []byte, oid uint32, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		text, err := types.Encode(oid, pgtype.TextFormatCode, v, nil)
		if err != nil {
			return nil, errors.New("not a string and cannot be encoded as text")
		}
		s = string(text)
	}
	var read any
	if err := types.Scan(oid, pgtype.TextFormatCode, []byte(s), &read); err != nil {
		return nil, err
	}
	return types.Encode(oid, pgtype.BinaryFormatCode, read, data)
}

func appendInt16(b []byte, n int16) []byte { return append(b, byte(n>>8), byte(n)) }

func appendInt32(b []byte, n int32) []byte {
	return append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// copyBufs keeps copyRows's buffers; maxCopyBuf bounds the ones kept, a
// batch of 256 charges and then some.
var copyBufs sync.Pool // *[]byte

const maxCopyBuf = 256 << 10

func takeCopyBuf() *[]byte {
	if b, _ := copyBufs.Get().(*[]byte); b != nil {
		return b
	}
	b := make([]byte, 0, 16<<10)
	return &b
}

func putCopyBuf(b *[]byte) {
	if cap(*b) <= maxCopyBuf {
		copyBufs.Put(b)
	}
}
