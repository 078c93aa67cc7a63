package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// backends runs f against a deployment on the embedded store and one on
// PostgreSQL.
func backends(t *testing.T, f func(t *testing.T, e env)) {
	t.Run("sqlite", func(t *testing.T) { f(t, embeddedEnv(t, "http://127.0.0.1:1/v1")) })
	t.Run("postgres", func(t *testing.T) {
		f(t, embeddedEnv(t, "http://127.0.0.1:1/v1").with(
			"SWITCHYARD_POSTGRES_URL", testenv.Postgres(t),
			"SWITCHYARD_KEY_SECRET", strings.Repeat("k", 40)))
	})
}

// scriptedBackends is backends with a scripted upstream of each run's own.
func scriptedBackends(t *testing.T, f func(t *testing.T, up *testupstream.Server, e env)) {
	backends(t, func(t *testing.T, e env) {
		up := testupstream.Start(t, demobackend.Options{})
		f(t, up, e.with("SWITCHYARD_UPSTREAM", up.URL()))
	})
}

func TestCLIKeys(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		r := mustCLI(t, e, "keys", "create", "--account", "newco", "--label", "ci runner")
		key := r.lastLine()
		if !strings.HasPrefix(key, "sk-") || len(key) < 43 || strings.Contains(key, " ") {
			t.Fatalf("last line %q is not a key alone", key)
		}
		if strings.Count(r.stdout, key) != 1 {
			t.Error("the key is printed more than once")
		}

		list := mustCLI(t, e, "keys", "list", "--account", "newco").stdout
		if strings.Contains(list, key) {
			t.Fatal("keys list shows a full key")
		}
		if !strings.Contains(list, "sk-..."+key[len(key)-4:]) || !strings.Contains(list, "ci runner") || !strings.Contains(list, "active") {
			t.Fatalf("keys list:\n%s", list)
		}
		id := strings.Fields(strings.Split(list, "\n")[1])[0]

		show := mustCLI(t, e, "accounts", "show", "--account", "newco").stdout
		if !strings.Contains(show, "$0.00") || !strings.Contains(show, "Active keys: 1 of 25") {
			t.Fatalf("a new account should have a zero balance and one key:\n%s", show)
		}

		mustCLI(t, e, "keys", "revoke", id)
		if list := mustCLI(t, e, "keys", "list", "--account", "newco").stdout; !strings.Contains(list, "revoked") {
			t.Fatalf("keys list after revoke:\n%s", list)
		}
		if r := cli(t, e, "keys", "revoke", "key_doesnotexist"); r.code == 0 || !strings.Contains(r.stderr, "no key") {
			t.Fatalf("revoking an unknown id: exit %d, stderr %q", r.code, r.stderr)
		}
		if r := cli(t, e, "keys", "list", "--account", "nobody"); r.code == 0 || !strings.Contains(r.stderr, "no account") {
			t.Fatalf("listing an unknown account: exit %d, stderr %q", r.code, r.stderr)
		}
		if r := cli(t, e, "keys", "create", "--account", "has space"); r.code == 0 {
			t.Fatal("an account name with a space was accepted")
		}
	})
}

func TestCLIKeyCreationRate(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		for i := 0; i < 5; i++ {
			newKey(t, e, "busy")
		}
		r := cli(t, e, "keys", "create", "--account", "busy")
		if r.code == 0 || strings.Contains(r.stdout, "sk-") || !strings.Contains(r.stderr, "per account per 1 hour") {
			t.Fatalf("sixth key within the hour: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		if n := strings.Count(mustCLI(t, e, "keys", "list", "--account", "busy").stdout, "active"); n != 5 {
			t.Fatalf("%d active keys after a refused sixth, want 5", n)
		}
	})
}

func TestCLITopUp(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		newKey(t, e, "payer")
		for _, bad := range []string{"4.99", "1000.01", "abc", "-5", "5.001", "", "0", "1e3"} {
			r := cli(t, e, "accounts", "topup", "--account", "payer", "--usd", bad)
			if r.code == 0 {
				t.Errorf("--usd %q accepted", bad)
			}
			if r.stderr == "" {
				t.Errorf("--usd %q refused without a message", bad)
			}
		}
		if show := mustCLI(t, e, "accounts", "show", "--account", "payer").stdout; !strings.Contains(show, "Balance:     $0.00") || strings.Contains(show, "topup") {
			t.Fatalf("refused top-ups wrote something:\n%s", show)
		}

		mustCLI(t, e, "accounts", "topup", "--account", "payer", "--usd", "5")
		mustCLI(t, e, "accounts", "topup", "--account", "payer", "--usd", "1000")
		r := mustCLI(t, e, "accounts", "topup", "--account", "payer", "--usd", "12.5", "--reference", "inv-1")
		if !strings.Contains(r.stdout, "$1017.50") {
			t.Fatalf("top-up output: %s", r.stdout)
		}
		r = mustCLI(t, e, "accounts", "topup", "--account", "payer", "--usd", "12.5", "--reference", "inv-1")
		if !strings.Contains(r.stdout, "already applied") || !strings.Contains(r.stdout, "$1017.50") {
			t.Fatalf("repeated top-up: %s", r.stdout)
		}
		if r := cli(t, e, "accounts", "topup", "--account", "ghost", "--usd", "10"); r.code == 0 {
			t.Fatal("top-up of an unknown account accepted")
		}
	})
}

func TestCLIBootstrap(t *testing.T) {
	e := embeddedEnv(t, "http://127.0.0.1:1/v1")
	r := mustCLI(t, e, "bootstrap")
	key := r.lastLine()
	if !strings.HasPrefix(key, "sk-") {
		t.Fatalf("bootstrap printed %q last", key)
	}
	if show := mustCLI(t, e, "accounts", "show", "--account", "dev").stdout; !strings.Contains(show, "$10.00") {
		t.Fatalf("dev account:\n%s", show)
	}
	again := mustCLI(t, e, "bootstrap")
	if strings.Contains(again.stdout, "sk-") && !strings.Contains(again.stdout, "keys create") {
		t.Fatalf("a second bootstrap printed a key: %s", again.stdout)
	}
	if show := mustCLI(t, e, "accounts", "show", "--account", "dev").stdout; !strings.Contains(show, "Active keys: 1 of 25") {
		t.Fatalf("a second bootstrap changed the account:\n%s", show)
	}
}

func TestEmbeddedKeySecretFile(t *testing.T) {
	e := embeddedEnv(t, "http://127.0.0.1:1/v1")
	newKey(t, e, "acme")
	fi, err := os.Stat(filepath.Join(e["SWITCHYARD_DATA_DIR"], "key_secret"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key_secret has mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestCLIFindsTheStoreThroughConfig(t *testing.T) {
	dataDir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(cfg, []byte("{\n\tswitchyard {\n\t\tdata_dir "+dataDir+"\n\t}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env{"SWITCHYARD_DATA_DIR": t.TempDir()} // must be ignored: the config names the dir
	mustCLI(t, e, "keys", "create", "--account", "viaconfig", "--config", cfg, "--adapter", "caddyfile")
	st := openStore(t, env{"SWITCHYARD_DATA_DIR": dataDir})
	if _, err := st.AccountByName(context.Background(), "viaconfig"); err != nil {
		t.Fatalf("the key did not land in the configured data dir: %v", err)
	}
}

func TestPostgresNeedsASharedSecret(t *testing.T) {
	e := embeddedEnv(t, "http://127.0.0.1:1/v1").with("SWITCHYARD_POSTGRES_URL", testenv.Postgres(t))
	r := cli(t, e, "keys", "create", "--account", "x")
	if r.code == 0 || !strings.Contains(r.stderr, "SWITCHYARD_KEY_SECRET") {
		t.Fatalf("exit %d, stderr %q: want a refusal naming SWITCHYARD_KEY_SECRET", r.code, r.stderr)
	}
}

func TestCLIListingsAsJSON(t *testing.T) {
	e := embeddedEnv(t, "http://127.0.0.1:1/v1")
	key := newKey(t, e, "lister")
	var keys struct {
		Data []struct {
			ID, Hint, Label string
			RevokedAt       *int64 `json:"revoked_at"`
		}
		HasMore *bool `json:"has_more"`
	}
	out := mustCLI(t, e, "keys", "list", "--account", "lister", "--json").stdout
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatalf("keys list --json: %v\n%s", err, out)
	}
	if len(keys.Data) != 1 || keys.Data[0].Hint != "sk-..."+key[len(key)-4:] || keys.Data[0].RevokedAt != nil ||
		keys.HasMore == nil || *keys.HasMore || strings.Contains(out, key) {
		t.Fatalf("keys list --json:\n%s", out)
	}

	table := mustCLI(t, e, "accounts", "list").stdout
	if !strings.Contains(table, "lister") || !strings.Contains(table, "enabled") {
		t.Fatalf("accounts list:\n%s", table)
	}
	for _, args := range [][]string{{"accounts", "lsit"}, {"keys", "list"}, {"usage", "--account", "lister", "--by", "model"}} {
		r := cli(t, e, args...)
		if r.code == 0 || !strings.HasPrefix(r.stderr, "switchyard: ") || strings.Count(r.stderr, "switchyard: ") != 1 || r.stdout != "" {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
	}
}
