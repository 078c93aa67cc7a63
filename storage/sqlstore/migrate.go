package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrationFiles are the schema changes, applied in version order, each
// exactly once per database. A file is named NNNN_what.sql, where NNNN is
// its version. To change the schema, add the next file; never edit one
// that has shipped. The SQL must run on both SQLite and PostgreSQL.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// bytewiseMarker marks, in a migration, a TEXT column that must compare
// bytewise whatever the database's locale, such as ids that order rows.
// SQLite's default collation, BINARY, already does, and it has no
// collation that PostgreSQL also knows; PostgreSQL's default follows the
// database locale and needs COLLATE "C". The marker is an SQL comment, so
// that a migration stays valid as written, and migrate replaces it with
// the dialect's BytewiseCollation.
const bytewiseMarker = "/*bytewise*/"

// onlyMarker opens, in a migration, statements for one dialect alone:
// /*only sqlite*/ ... /*end only*/ runs on SQLite and is left out
// elsewhere. They are for what one database needs and the other has no
// words for, such as a table rebuilt WITHOUT ROWID on SQLite, which
// PostgreSQL, its tables being heaps beside their indexes, would only
// copy for nothing. Like bytewiseMarker the markers are comments, so
// that the file stays valid SQLite as written.
const (
	onlyMarker    = "/*only "
	endOnlyMarker = "/*end only*/"
)

// forDialect returns the statements of m as d runs them.
func (m migration) forDialect(d Dialect) (string, error) {
	text := m.sql
	var b strings.Builder
	for {
		start := strings.Index(text, onlyMarker)
		if start < 0 {
			break
		}
		b.WriteString(text[:start])
		rest := text[start+len(onlyMarker):]
		name, rest, ok := strings.Cut(rest, "*/")
		body, after, closed := strings.Cut(rest, endOnlyMarker)
		if !ok || !closed || strings.Contains(body, onlyMarker) {
			return "", fmt.Errorf("migration %s: %s without its %s", m.name, onlyMarker+name+"*/", endOnlyMarker)
		}
		if strings.TrimSpace(name) == d.Name {
			b.WriteString(body)
		}
		text = after
	}
	if strings.Contains(text, endOnlyMarker) {
		return "", fmt.Errorf("migration %s: %s without its %s", m.name, endOnlyMarker, onlyMarker+"...*/")
	}
	b.WriteString(text)
	return strings.ReplaceAll(b.String(), bytewiseMarker, d.BytewiseCollation), nil
}

// loadMigrations reads fsys's migrations/*.sql sorted by version.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := make(map[int]string)
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		if other, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations %s and %s have the same version", other, base)
		}
		seen[version] = base
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: version, name: base, sql: string(text)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// LatestVersion is the schema version this build migrates to.
func LatestVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// MigrateTo applies the migrations up to and including version that d's
// database lacks, as New would apply them all. It leaves a database as
// an older build left it, for tests of what a later migration does to
// the rows it finds.
func MigrateTo(ctx context.Context, d Driver, version int) error {
	return migrate(ctx, d, time.Now, version)
}

// migrate applies the migrations the database lacks, up to version (all
// of them when version <= 0), all in one transaction that first takes
// the dialect's migration lock: of several processes starting at once,
// one migrates and the others then find nothing left to do. A database
// migrated by a newer build (versions this build does not know) is used
// as is: migrations only add.
func migrate(ctx context.Context, db Driver, now func() time.Time, version int) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	if version > 0 {
		ms = slices.DeleteFunc(ms, func(m migration) bool { return m.version > version })
	}
	err = inTx(ctx, db, func(tx Tx) error {
		if lock := db.Dialect().MigrationLock; lock != "" {
			if _, err := tx.Exec(ctx, lock); err != nil {
				return fmt.Errorf("taking the migration lock: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    BIGINT PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at BIGINT NOT NULL
		)`); err != nil {
			return err
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			text, err := m.forDialect(db.Dialect())
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, text); err != nil {
				return fmt.Errorf("applying %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.version, m.name, micros(now())); err != nil {
				return fmt.Errorf("recording %s: %w", m.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("applying migrations: %w", err)
	}
	return nil
}

func appliedVersions(ctx context.Context, q Querier) (map[int]bool, error) {
	rows, err := q.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := make(map[int]bool)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[int(v)] = true
	}
	return applied, rows.Err()
}

// SchemaVersion is the highest migration version applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int64
	err := s.db.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return int(v), err
}
