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

func TestSettleUsageBatchLogged(t *testing.T) {
	dsn := testenv.Postgres(t)
	s, err := postgres.Open(t.Context(), dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refuse := func() {
		admin, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close(context.WithoutCancel(t.Context()))
		if _, err := admin.Exec(t.Context(), `CREATE OR REPLACE FUNCTION refuse_entry() RETURNS trigger AS $$
			BEGIN
				IF NEW.path = '`+storagetest.RefusedLogPath+`' THEN RAISE EXCEPTION 'entry refused'; END IF;
				RETURN NEW;
			END $$ LANGUAGE plpgsql;
			CREATE OR REPLACE TRIGGER refuse_entry BEFORE INSERT ON request_log
				FOR EACH ROW EXECUTE FUNCTION refuse_entry()`); err != nil {
			t.Fatal(err)
		}
	}
	transactions := func() uint64 {
		_, n, _ := postgres.Counts()
		return n
	}
	storagetest.RunSettleUsageBatchLogged(t, s, refuse, transactions)
}
