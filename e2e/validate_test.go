package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestValidateLeavesNoTrace: validating the example config, with validate
// or adapt --validate, writes no secret and creates no database or blob
// directory in the data dir, an empty one or one that does not exist yet,
// and leaves no scratch directory behind.
func TestValidateLeavesNoTrace(t *testing.T) {
	example := filepath.Join(repoRoot, "Caddyfile.example")
	for _, args := range [][]string{
		{"validate", "--config", example, "--adapter", "caddyfile"},
		{"adapt", "--validate", "--config", example, "--adapter", "caddyfile"},
	} {
		t.Run(args[0], func(t *testing.T) {
			empty, tmp := t.TempDir(), t.TempDir()
			missing := filepath.Join(t.TempDir(), "data")
			for _, dataDir := range []string{empty, missing} {
				e := embeddedEnv(t, "http://127.0.0.1:9/v1").with("SWITCHYARD_DATA_DIR", dataDir,
					"SWITCHYARD_LISTEN", "127.0.0.1:0", "SWITCHYARD_ADMIN", "127.0.0.1:0", "TMPDIR", tmp)
				res := cli(t, e, args...)
				if res.code != 0 {
					t.Fatalf("switchyard %v: exit %d\n%s", args, res.code, res.stderr)
				}
				if dataDir == missing {
					if _, err := os.Stat(missing); !os.IsNotExist(err) {
						t.Errorf("switchyard %v created the data dir %s (%v)", args, missing, err)
					}
				} else {
					assertEmptyDir(t, dataDir)
				}
				if left, _ := filepath.Glob(filepath.Join(tmp, "switchyard-validate-*")); len(left) > 0 {
					t.Errorf("switchyard %v left its scratch directory %v", args, left)
				}
			}
		})
	}
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s holds %s after validation", dir, e.Name())
	}
}
