package caddymodules

import (
	"testing"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// BenchmarkIdleStreamMemoryDistributed is BenchmarkIdleStreamMemory in
// the distributed mode: the same Caddyfile and streams, on a PostgreSQL
// database of its own and the test Redis under a prefix of its own
// (SWITCHYARD_TEST_POSTGRES, SWITCHYARD_TEST_REDIS), as
// BenchmarkV1JSONDistributed sets them up. A stream's lease and hold are
// then Redis's, renewed for as long as it stays open, so its figures
// against the embedded benchmark's are what the distributed mode keeps
// per stream. The same environment variables set the count and save the
// profiles.
//
//	go test ./caddymodules -run '^$' -bench IdleStreamMemoryDistributed -benchtime 1x
func BenchmarkIdleStreamMemoryDistributed(b *testing.B) {
	if testenv.RaceEnabled {
		b.Skip("memory under the race detector is the detector's")
	}
	setDistributedEnv(b)
	benchIdleStreams(b)
}
