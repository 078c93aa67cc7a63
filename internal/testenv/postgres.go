package testenv

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresEnv names the environment variable holding the DSN of a
// PostgreSQL server where tests may create and drop databases.
const PostgresEnv = "SWITCHYARD_TEST_POSTGRES"

// DefaultPostgres is the admin DSN used when PostgresEnv is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Postgres creates a fresh, empty database for t and returns its DSN. The
// database is dropped when t ends, along with any connections still open
// to it. The test fails if PostgreSQL is unreachable.
func Postgres(t testing.TB) string {
	t.Helper()
	admin := getenv(PostgresEnv, DefaultPostgres)
	name := "sy_" + randomName(16)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("PostgreSQL not reachable at %s (set %s to change it): run `make test`, which starts it, or start it yourself: %v",
			redact(admin), PostgresEnv, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	return withDatabase(admin, name)
}

// withDatabase returns dsn with its database replaced by name. dsn is a
// URL or a key=value string, the two forms pgx accepts.
func withDatabase(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	// In a key=value string the last of repeated keys wins.
	return strings.TrimSpace(dsn) + " dbname=" + name
}

// redact hides a password in dsn, for messages.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	return dsn
}
