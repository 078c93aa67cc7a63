package telemetry

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// RegisterStoreCounters exposes how many statements the store in use ran
// (SQLite when embedded, else PostgreSQL), so that the SQL a request
// costs can be counted rather than guessed (make bench does). The other
// store's series is not exported: a constant 0 would read as a store that
// runs nothing.
func RegisterStoreCounters(reg prometheus.Registerer, embedded bool) error {
	counter := func(name, help, kind string, read func() uint64) prometheus.CounterFunc {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "switchyard", Name: name, Help: help,
			ConstLabels: prometheus.Labels{"kind": kind},
		}, guardedRead(func() float64 { return float64(read()) }))
	}
	const (
		sqliteName = "sqlite_statements_total"
		sqliteHelp = "Statements the embedded SQLite store ran: kind read (queries outside a write transaction), " +
			"transaction (write transactions) or in_transaction (statements inside them)."
		pgName = "postgres_statements_total"
		pgHelp = "Statements the PostgreSQL store sent: kind read (queries outside a transaction), " +
			"transaction (write transactions) or feed_ping (the commit feed proving how far it has read)."
	)
	cs := []prometheus.CounterFunc{
		counter(pgName, pgHelp, "read", func() uint64 { r, _, _ := postgres.Counts(); return r }),
		counter(pgName, pgHelp, "transaction", func() uint64 { _, t, _ := postgres.Counts(); return t }),
		counter(pgName, pgHelp, "feed_ping", func() uint64 { _, _, p := postgres.Counts(); return p }),
	}
	if embedded {
		cs = []prometheus.CounterFunc{
			counter(sqliteName, sqliteHelp, "read", func() uint64 { r, _, _ := sqlite.Counts(); return r }),
			counter(sqliteName, sqliteHelp, "transaction", func() uint64 { _, t, _ := sqlite.Counts(); return t }),
			counter(sqliteName, sqliteHelp, "in_transaction", func() uint64 { _, _, s := sqlite.Counts(); return s }),
		}
	}
	var errs []error
	for i := range cs {
		Reuse(reg, &cs[i], &errs)
	}
	return errors.Join(errs...)
}

// redisRoundTrips counts the round trips every Redis client of this
// process makes: one per command, one per pipeline. Commands that Redis
// runs inside a script are not round trips and are not counted.
var redisRoundTrips = prometheus.NewCounter(prometheus.CounterOpts{
	Namespace: "switchyard", Name: "redis_round_trips_total",
	Help: "Round trips to Redis: one per command sent, one per pipeline.",
})

// countedClients are the Redis clients already counting, so that a client
// shared across config reloads gets one hook.
var countedClients sync.Map // redis.UniversalClient -> struct{}

// CountRedis makes c count its round trips in redisRoundTrips and
// registers the counter on reg.
func CountRedis(reg *prometheus.Registry, c redis.UniversalClient) error {
	if _, loaded := countedClients.LoadOrStore(c, struct{}{}); !loaded {
		c.AddHook(roundTripHook{})
	}
	if reg == nil {
		return nil
	}
	var errs []error
	ctr := redisRoundTrips
	Reuse(reg, &ctr, &errs)
	return errors.Join(errs...)
}

type roundTripHook struct{}

func (roundTripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (roundTripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		redisRoundTrips.Inc()
		return next(ctx, cmd)
	}
}

func (roundTripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		redisRoundTrips.Inc()
		return next(ctx, cmds)
	}
}
