package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// openStore opens the deployment's store directly, as a second process
// would, to arrange or inspect state the CLI has no command for.
func openStore(t *testing.T, e env) storage.Store {
	t.Helper()
	ctx := context.Background()
	var (
		st  storage.Store
		err error
	)
	if dsn := e["SWITCHYARD_POSTGRES_URL"]; dsn != "" {
		st, err = postgres.Open(ctx, dsn, storage.Options{})
	} else {
		st, err = sqlite.Open(ctx, filepath.Join(e["SWITCHYARD_DATA_DIR"], "switchyard.db"), storage.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// accountNamed is the live account called name.
func accountNamed(t *testing.T, st storage.Store, name string) storage.Account {
	t.Helper()
	acct, err := st.AccountByName(context.Background(), name)
	if err != nil {
		t.Fatalf("account %s: %v", name, err)
	}
	return acct
}

// credit posts an adjustment of cents to an account's ledger, for
// balances the CLI's top-up cannot set.
func credit(t *testing.T, st storage.Store, accountID string, cents int64, reference string) {
	t.Helper()
	if _, err := st.Post(context.Background(), storage.Entry{AccountID: accountID, AmountCents: cents,
		Kind: storage.EntryAdjustment, Reference: reference}); err != nil {
		t.Fatal(err)
	}
}

func deleteAccount(t *testing.T, e env, name string) {
	t.Helper()
	st := openStore(t, e)
	ctx := context.Background()
	acct := accountNamed(t, st, name)
	if err := st.DeleteAccount(ctx, acct.ID); err != nil {
		t.Fatal(err)
	}
}
