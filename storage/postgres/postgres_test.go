package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

var databaseDSN = storagetest.DatabasePerTest(func(t *testing.T) string { return testenv.Postgres(t) })

var open = storagetest.OpenWith(databaseDSN, postgres.Open)

func TestContract(t *testing.T) {
	storagetest.Run(t, open)
}

func TestApplicationName(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  string
	}{
		{"default", "", postgres.DefaultApplicationName},
		{"from the DSN", "application_name=gateway-7", "gateway-7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := testenv.Postgres(t)
			if tt.query != "" {
				dsn += "&" + tt.query
			}
			s, err := postgres.Open(t.Context(), dsn, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.CountAccounts(t.Context()); err != nil { // a pool connection is open
				t.Fatal(err)
			}
			admin, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(t.Context())
			var names []string
			rows, _ := admin.Query(t.Context(), `SELECT application_name FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			names, err = pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			if len(names) == 0 {
				t.Fatal("no connections from the store")
			}
			for _, got := range names {
				if got != tt.want {
					t.Errorf("application_name = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestOpenUnreachable(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Port 1 on loopback refuses at once.
	_, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", storage.Options{})
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
}
