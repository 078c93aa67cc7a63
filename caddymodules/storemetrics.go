package caddymodules

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// registerStoreCounters exposes how many statements the embedded store
// ran, so that the SQL a request costs can be counted rather than guessed
// (make bench does). PostgreSQL counts its own, in pg_stat_database.
func registerStoreCounters(reg prometheus.Registerer) error {
	counter := func(kind, help string, read func() uint64) prometheus.CounterFunc {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "switchyard", Name: "sqlite_statements_total", Help: help,
			ConstLabels: prometheus.Labels{"kind": kind},
		}, func() float64 { return float64(read()) })
	}
	const help = "Statements the embedded SQLite store ran: kind read (queries outside a write transaction), " +
		"transaction (write transactions) or in_transaction (statements inside them)."
	cs := []prometheus.CounterFunc{
		counter("read", help, func() uint64 { r, _, _ := sqlite.Counts(); return r }),
		counter("transaction", help, func() uint64 { _, t, _ := sqlite.Counts(); return t }),
		counter("in_transaction", help, func() uint64 { _, _, s := sqlite.Counts(); return s }),
	}
	var errs []error
	for i := range cs {
		reuse(reg, &cs[i], &errs)
	}
	return errors.Join(errs...)
}
