package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

func TestUpgrades(t *testing.T) {
	dsn := storagetest.DatabasePerTest(func(t *testing.T) string { return testenv.Postgres(t) })
	storagetest.RunUpgrades(t, storagetest.OpenWith(dsn, Open), func(t *testing.T) sqlstore.Driver {
		cfg, err := pgxpool.ParseConfig(dsn(t))
		if err != nil {
			t.Fatal(err)
		}
		pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return &driver{pool: pool, feed: newCommitFeed(cfg.ConnConfig.Copy())}
	})
}
