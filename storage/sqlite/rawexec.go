package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
)

// Write transactions run on one connection the driver keeps for them,
// so that their statements with arguments can run on SQLite's own
// driver without database/sql in between. database/sql converts every
// argument into a slice of its own on every Exec: for the ledger writer's
// multi-row INSERTs, 28 arguments a charge, that was about 1.1 KB of the
// 2.9 KB a charge allocated (BenchmarkSettleUsageBatch, batch 128).
// Here the statements are prepared once on that connection and their
// arguments go through one slice, kept for the next statement.
//
// One write transaction of this process runs at a time (driver.writer),
// so the connection, its statements and the slice need no lock of their
// own.
type writeConn struct {
	conn  *sql.Conn
	stmts map[string]sqldriver.Stmt // prepared on conn's driver connection
	args  []sqldriver.NamedValue
}

// errNotRaw is returned by rawExec for arguments it leaves to
// database/sql.
var errNotRaw = errors.New("sqlite: argument for database/sql")

// begin starts a transaction on the write connection, opening it first
// if there is none or database/sql closed it.
func (d *driver) begin(ctx context.Context) (*sql.Tx, error) {
	for attempt := 0; ; attempt++ {
		if d.write.conn == nil {
			conn, err := d.db.Conn(ctx)
			if err != nil {
				return nil, err
			}
			d.write = writeConn{conn: conn, stmts: make(map[string]sqldriver.Stmt)}
		}
		// Without a cancel: database/sql would roll the transaction back
		// from another goroutine when ctx ends, while rawExec may be
		// running a statement on the connection outside its knowledge.
		// The store ends every transaction itself (sqlstore's inTx, on a
		// panic too), and each statement still stops with ctx.
		tx, err := d.write.conn.BeginTx(context.WithoutCancel(ctx), nil)
		if err == nil || attempt > 0 || !(errors.Is(err, sql.ErrConnDone) || errors.Is(err, sqldriver.ErrBadConn)) {
			return tx, err
		}
		d.dropWriteConn()
	}
}

// dropWriteConn forgets a write connection database/sql closed. Its
// statements are left to SQLite, which frees them with the connection's
// memory.
func (d *driver) dropWriteConn() {
	if d.write.conn != nil {
		_ = d.write.conn.Close()
	}
	d.write = writeConn{}
}

// closeWriteConn finalises the write connection's statements and closes
// it.
func (d *driver) closeWriteConn() {
	if d.write.conn == nil {
		return
	}
	_ = d.write.conn.Raw(func(any) error {
		for _, st := range d.write.stmts {
			_ = st.Close()
		}
		return nil
	})
	d.dropWriteConn()
}

// rawExec runs query with args on the write connection, in the
// transaction open on it, as database/sql would but without copying the
// arguments. errNotRaw: an argument needs database/sql (a named one),
// nothing ran.
func (d *driver) rawExec(ctx context.Context, query string, args []any) (affected int64, err error) {
	// The statement itself runs without ctx (see calm), once ctx is seen
	// to be live.
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	w := &d.write
	err = w.conn.Raw(func(dc any) error {
		st, err := w.stmt(ctx, dc, query)
		if err != nil {
			return err
		}
		exec, ok := st.(sqldriver.StmtExecContext)
		if !ok {
			return errNotRaw
		}
		nv := w.args[:0]
		defer func() {
			clear(nv) // the strings of this batch are not the next one's
			w.args = nv[:0]
		}()
		for i, a := range args {
			v, err := driverValue(a)
			if err != nil {
				return err
			}
			nv = append(nv, sqldriver.NamedValue{Ordinal: i + 1, Value: v})
		}
		res, err := exec.ExecContext(context.Background(), nv)
		if err != nil {
			return err
		}
		affected, err = res.RowsAffected()
		return err
	})
	return affected, err
}

func (w *writeConn) stmt(ctx context.Context, dc any, query string) (sqldriver.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	prep, ok := dc.(sqldriver.ConnPrepareContext)
	if !ok {
		return nil, errNotRaw
	}
	st, err := prep.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// driverValue is a as database/sql hands it to a driver without a
// NamedValueChecker, as SQLite's is: the types a driver takes as they
// are, anything else through sqldriver.DefaultParameterConverter.
func driverValue(a any) (sqldriver.Value, error) {
	switch a.(type) {
	case nil, int64, float64, bool, []byte, string:
		return a, nil
	case sql.NamedArg:
		return nil, errNotRaw
	}
	v, err := sqldriver.DefaultParameterConverter.ConvertValue(a)
	if err != nil {
		return nil, fmt.Errorf("sqlite: converting argument of type %T: %w", a, err)
	}
	return v, nil
}
