package testenv

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

func TestWithDatabase(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"url", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "postgres://postgres@127.0.0.1:5432/sy_x?sslmode=disable"},
		{"url without database", "postgresql://u:p@db", "postgresql://u:p@db/sy_x"},
		{"key value", "host=127.0.0.1 dbname=test user=postgres", "host=127.0.0.1 dbname=test user=postgres dbname=sy_x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := withDatabase(tt.dsn, "sy_x"); got != tt.want {
				t.Errorf("withDatabase(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"password", "postgres://u:secret@h/db", "postgres://u:xxxxx@h/db"},
		{"no password", "postgres://u@h/db", "postgres://u@h/db"},
		{"redis", "redis://:secret@h:6379/0", "redis://:xxxxx@h:6379/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact(tt.dsn); got != tt.want {
				t.Errorf("redact(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
		})
	}
}

func TestPostgresFreshDatabaseDroppedAtCleanup(t *testing.T) {
	ctx := context.Background()
	var name string
	t.Run("use", func(t *testing.T) {
		dsn := Postgres(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connecting to the fresh database: %v", err)
		}
		// An open connection must not stop the drop.
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "sy_") {
			t.Errorf("database %q, want a sy_ name", name)
		}
		var tables int
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("fresh database has %d tables", tables)
		}
	})
	conn, err := pgx.Connect(ctx, getenv(PostgresEnv, DefaultPostgres))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestRedisPrefixDeletedAtCleanup(t *testing.T) {
	ctx := context.Background()
	var url, prefix string
	t.Run("use", func(t *testing.T) {
		url, prefix = Redis(t)
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		client := redis.NewClient(opts)
		defer client.Close()
		const n = 1200 // more than one SCAN/DEL batch
		for i := range n {
			if err := client.Set(ctx, fmt.Sprintf("%sk%d", prefix, i), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if keys, err := client.Keys(ctx, prefix+"*").Result(); err != nil || len(keys) != n {
			t.Fatalf("found %d keys under %s (err %v), want %d", len(keys), prefix, err, n)
		}
	})
	opts, _ := redis.ParseURL(url)
	client := redis.NewClient(opts)
	defer client.Close()
	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("%d keys under %s remain after the test ended", len(keys), prefix)
	}
}
