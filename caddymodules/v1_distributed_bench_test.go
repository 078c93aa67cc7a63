package caddymodules

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/storage/postgres"
)

// BenchmarkV1JSONDistributed is BenchmarkV1JSON in the distributed mode:
// Caddyfile.example's switchyard block on a PostgreSQL database of its
// own and the test Redis under a prefix of its own
// (SWITCHYARD_TEST_POSTGRES, SWITCHYARD_TEST_REDIS), beside the same
// plain reverse_proxy site. Each request's admission is a Redis round
// trip and its charge a row the PostgreSQL ledger writer commits.
//
//	go test ./caddymodules -run '^$' -bench V1JSONDistributed -benchmem
func BenchmarkV1JSONDistributed(b *testing.B) {
	discardStderr(b)
	setDistributedEnv(b)
	plain, gateway, key := loadV1Bench(b, drainingUpstream(b))
	benchServeBoth(b, plain, gateway, key, countPostgres)
}

// countPostgres starts counting the PostgreSQL statements the gateway
// sends, and returns what reports them per request: its reads (the key
// state read again after a commit), write transactions and the commit
// feed's pings. They are counted over the whole sub-benchmark, its
// warm-up included, and divided by all the requests it served.
func countPostgres(b *testing.B) func() {
	reads, txs, pings := postgres.Counts()
	return func() {
		r, t, p := postgres.Counts()
		served := float64(b.N + benchWarmUp)
		b.ReportMetric(float64(r-reads)/served, "pg-reads/req")
		b.ReportMetric(float64(t-txs)/served, "pg-txs/req")
		b.ReportMetric(float64(p-pings)/served, "pg-pings/req")
	}
}

// benchWarmUp is how many requests benchServe serves before it counts.
const benchWarmUp = 200

// setDistributedEnv points the gateway a benchmark loads at the test
// PostgreSQL and Redis (under a key prefix of its own), as a
// distributed deployment is configured.
func setDistributedEnv(b *testing.B) {
	redisURL, prefix := testenv.Redis(b)
	b.Setenv("SWITCHYARD_POSTGRES_URL", testenv.Postgres(b))
	b.Setenv("SWITCHYARD_REDIS_URL", redisURL)
	b.Setenv("SWITCHYARD_REDIS_PREFIX", prefix)
	b.Setenv("SWITCHYARD_REDIS_MODE", "single")
	b.Setenv("SWITCHYARD_KEY_SECRET", strings.Repeat("k", 32))
}

// BenchmarkV1JSONEmbeddedConcurrent is BenchmarkV1JSONDistributed on the
// embedded store: its profiles are what the distributed mode's are set
// against, at one client and at 32, in one process, where
// BenchmarkV1JSON has one client only.
//
//	go test ./caddymodules -run '^$' -bench V1JSONEmbeddedConcurrent -benchmem
func BenchmarkV1JSONEmbeddedConcurrent(b *testing.B) {
	discardStderr(b)
	plain, gateway, key := loadV1Bench(b, drainingUpstream(b))
	benchServeBoth(b, plain, gateway, key, nil)
}

// benchServeBoth serves the bench's request through plain and gateway,
// from one client and then from 32, as the bench's budget line:
// admissions share the Redis pipelines, charges the ledger writer's
// batches. count, when not nil, starts counting at each sub-benchmark
// and returns what reports the count at its end.
func benchServeBoth(b *testing.B, plain, gateway *caddyhttp.Server, key string, count func(*testing.B) func()) {
	for _, c := range []struct {
		name    string
		srv     *caddyhttp.Server
		clients int
	}{{"plain", plain, 1}, {"switchyard", gateway, 1}, {"plain-c32", plain, 32}, {"switchyard-c32", gateway, 32}} {
		b.Run(c.name, func(b *testing.B) {
			if count != nil {
				defer count(b)()
			}
			benchServe(b, c.srv, key, c.clients)
		})
	}
}
