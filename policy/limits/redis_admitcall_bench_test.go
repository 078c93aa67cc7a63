package limits

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkNewAdmitCall builds the admit script's command for a billed
// stream with a rolling rate, with the gateway's prefix and ids, without
// Redis: the process's own work of an admission before its round trip,
// its call given back as an answered admission's is.
func BenchmarkNewAdmitCall(b *testing.B) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	r, err := NewRedis(RedisConfig{Client: client, Prefix: "switchyard:"})
	if err != nil {
		b.Fatal(err)
	}
	req := AdmitRequest{Key: "key_0123456789abcdefghijkl", StreamLimit: 8, WantLease: true,
		Rate:    Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true},
		Reserve: Reservation{Account: "acct_0123456789abcdefghijkl", Balance: 1 << 40, Want: 40, Min: 1}}
	owner, err := req.owner()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		freeAdmitCall(r.newAdmitCall(req, owner))
	}
}
