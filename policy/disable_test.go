package policy_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// TestDisabledAccountKeysRefusedOnEveryNode: two nodes on one database,
// each with a warm key cache, see a key refused once an operator disabled
// its account on one of them, and accepted again once it is enabled.
func TestDisabledAccountKeysRefusedOnEveryNode(t *testing.T) {
	tests := []struct {
		name string
		open func(t *testing.T) func() storage.Store
		// wait is how long the other node may take: none on SQLite,
		// the commit feed's notification on PostgreSQL.
		wait time.Duration
	}{
		{"sqlite", func(t *testing.T) func() storage.Store {
			path := filepath.Join(t.TempDir(), "sy.db")
			return func() storage.Store {
				s, err := sqlite.Open(t.Context(), path, storage.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		}, 0},
		{"postgres", func(t *testing.T) func() storage.Store {
			dsn := testenv.Postgres(t)
			return func() storage.Store {
				s, err := postgres.Open(t.Context(), dsn, storage.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := tt.open(t)
			nodes := []storage.Store{open(), open()}
			hasher, err := policy.NewKeyHasher([]byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			key, rec, err := policy.IssueKey(t.Context(), nodes[0], hasher, policy.ProfileFor(policy.RevisionB), "acme", "")
			if err != nil {
				t.Fatal(err)
			}
			auths := make([]*policy.Authenticator, len(nodes))
			for i, n := range nodes {
				auths[i] = policy.NewAuthenticator(n, hasher, policy.NewKeyCache(100, nil), time.Minute)
				if _, err := auths[i].Authenticate(t.Context(), "Bearer "+key); err != nil {
					t.Fatalf("node %d before disabling: %v", i, err)
				}
			}
			if _, err := policy.SetAccountDisabled(t.Context(), nodes[0], rec.AccountID, true); err != nil {
				t.Fatal(err)
			}
			for i, a := range auths {
				err := eventually(tt.wait, func() error { _, err := a.Authenticate(t.Context(), "Bearer "+key); return err })
				if ae := (*apierror.Error)(nil); !errors.As(err, &ae) || ae.Status != 401 || ae.Code != "invalid_api_key" {
					t.Errorf("node %d after disabling: %v, want 401 invalid_api_key", i, err)
				}
			}
			if _, _, err := policy.IssueKey(t.Context(), nodes[1], hasher, policy.ProfileFor(policy.RevisionB), "acme", ""); apierror.From(err).Code != "account_disabled" {
				t.Errorf("IssueKey on a disabled account: %v, want account_disabled", err)
			}
			if _, err := policy.SetAccountDisabled(t.Context(), nodes[1], rec.AccountID, false); err != nil {
				t.Fatal(err)
			}
			for i, a := range auths {
				if _, err := a.Authenticate(t.Context(), "Bearer "+key); err != nil {
					t.Errorf("node %d after enabling: %v", i, err)
				}
			}
			if _, err := policy.SetAccountDisabled(t.Context(), nodes[0], "acct_nope", true); apierror.From(err).Code != "account_not_found" {
				t.Errorf("disabling an unknown account: %v, want account_not_found", err)
			}
		})
	}
}

// eventually calls f until it fails or wait has passed, and returns its
// last error: a refusal is expected, so a success is retried.
func eventually(wait time.Duration, f func() error) error {
	deadline := time.Now().Add(wait)
	for {
		err := f()
		if err != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
