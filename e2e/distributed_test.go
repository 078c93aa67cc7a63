package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// distributedEnv is a deployment on PostgreSQL and Redis.
func distributedEnv(t *testing.T, upstream string) env {
	t.Helper()
	redisURL, prefix := testenv.Redis(t)
	return embeddedEnv(t, upstream).with(
		"SWITCHYARD_POSTGRES_URL", testenv.Postgres(t),
		"SWITCHYARD_REDIS_URL", redisURL,
		"SWITCHYARD_REDIS_PREFIX", prefix,
		"SWITCHYARD_KEY_SECRET", strings.Repeat("s", 48),
	)
}

func TestRevocationReachesEveryNode(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{})
	e := distributedEnv(t, up.URL())
	key := fundedKey(t, e, "acme")
	cfg := withSwitchyardOption(t, "key_cache_ttl -1s")
	g1, g2 := startGateway(t, e, cfg), startGateway(t, e, cfg)
	warm(t, key, g1, g2)
	revokeOnly(t, e, "acme")

	// Without a key cache, refused on the very next request everywhere.
	for i, g := range []*gateway{g2, g1, g2, g1} {
		if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusUnauthorized {
			t.Fatalf("request %d after revocation: %d %s", i, status, body)
		}
	}
}

// TestRevocationReachesCachingNodes: with the key cache, a key revoked
// through the CLI, another process, is refused by every node once the
// revocation's notification reached it: at most 250 ms later (the commit
// feed's bound), or the node reads the store on every request. The
// ten-minute cache lifetime shows that it is the notification, not
// expiry, that ends the key.
func TestRevocationReachesCachingNodes(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{})
	e := distributedEnv(t, up.URL())
	key := fundedKey(t, e, "acme")
	cfg := withSwitchyardOption(t, "key_cache_ttl 10m")
	g1, g2 := startGateway(t, e, cfg), startGateway(t, e, cfg)
	warm(t, key, g1, g2)

	revokeOnly(t, e, "acme")

	// Notifications are asynchronous; the deadline is far above the feed's
	// bound so that a loaded machine does not fail the test, and far below
	// the cache lifetime that would apply if they never came.
	for i, g := range []*gateway{g2, g1} {
		deadline := time.Now().Add(2 * time.Second)
		for {
			status, _, _ := g.do("GET", "/v1/models", key, "")
			if status == http.StatusUnauthorized {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d still accepts the revoked key 2s after revocation", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// warm sends a few authenticated requests to every node.
func warm(t *testing.T, key string, nodes ...*gateway) {
	t.Helper()
	for i := 0; i < 3; i++ {
		for _, g := range nodes {
			if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusOK {
				t.Fatalf("warming: %d %s", status, body)
			}
		}
	}
}

// revokeOnly revokes the account's only key through the CLI.
func revokeOnly(t *testing.T, e env, account string) {
	t.Helper()
	list := mustCLI(t, e, "keys", "list", "--account", account).stdout
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	mustCLI(t, e, "keys", "revoke", id)
}

// withSwitchyardOption writes Caddyfile.example with one more line in its
// switchyard block and returns its path.
func withSwitchyardOption(t *testing.T, line string) string {
	t.Helper()
	return writeConfig(t, exampleConfig(t, "\tswitchyard {", "\tswitchyard {\n\t\t"+line))
}

// TestReloadKeepsStreamsAndConnections reloads a changed config while a
// stream is in flight, several times, and checks that the stream completes
// intact and that the reloads neither open new database pools nor leave
// old ones behind.
func TestReloadKeepsStreamsAndConnections(t *testing.T) {
	words := strings.Repeat("token ", 60)
	up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 15 * time.Millisecond})
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) { return testupstream.Text(words), true })
	e := distributedEnv(t, up.URL())
	key := fundedKey(t, e, "acme")
	g := startGateway(t, e)

	// Let the pool and the revocation listener settle, then count.
	g.do("GET", "/v1/models", key, "")
	before := backendConnections(t, e["SWITCHYARD_POSTGRES_URL"])

	var wg sync.WaitGroup
	var streamed string
	var streamErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		streamed, streamErr = streamText(g, key)
	}()

	for i := 0; i < 4; i++ {
		time.Sleep(100 * time.Millisecond) // spread the reloads over the stream's life
		rev := []string{"A", "B"}[i%2]
		g.load(exampleConfig(t, "\tswitchyard {", "\tswitchyard {\n\t\trevision "+rev))
	}
	wg.Wait()
	if streamErr != nil {
		t.Fatalf("stream across reloads: %v", streamErr)
	}
	if strings.Count(streamed, "token") != 60 {
		t.Fatalf("stream across reloads delivered %d of 60 tokens", strings.Count(streamed, "token"))
	}
	// The stream's charge is committed just after it ends; a request
	// made meanwhile would take a second connection from the same pool.
	settleLedgers(t)
	if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusOK {
		t.Fatalf("after reloads: %d %s", status, body)
	}
	// One more connection than before is the shared pool growing: a
	// commit and a request that overlapped each took one, and the pool
	// keeps idle connections. A pool opened or left behind per reload
	// would add one for each of the four.
	after := backendConnections(t, e["SWITCHYARD_POSTGRES_URL"])
	if after > before+1 {
		t.Fatalf("PostgreSQL connections grew from %d to %d across reloads", before, after)
	}
	if !strings.Contains(g.log.String(), `"revision":"A"`) {
		t.Fatal("the reloaded config was not applied")
	}
}

// streamText streams a /v1 completion and returns the raw event text.
func streamText(g *gateway, key string) (string, error) {
	text, err := readAnswer(g, "/v1/chat/completions", key, `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`)
	if err != nil {
		return text, err
	}
	if !strings.HasSuffix(strings.TrimSpace(text), "data: [DONE]") {
		return text, fmt.Errorf("stream did not end with [DONE]")
	}
	return text, nil
}

// backendConnections counts the gateway's connections to its database.
func backendConnections(t *testing.T, dsn string) int {
	t.Helper()
	return pgCount(t, dsn, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
}

// pgCount runs a count query on its own connection to the database dsn
// names, so that it is not counted among the gateway's.
func pgCount(t *testing.T, dsn, query string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
