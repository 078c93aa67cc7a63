package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Racing processes agree on one secret, and the file is the owner's alone.
func TestReadOrCreateOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key_secret")
	got := make([]string, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			s, err := ReadOrCreate(path)
			if err != nil {
				t.Error(err)
			}
			got[i] = string(s)
		})
	}
	wg.Wait()
	for _, s := range got {
		if s != got[0] || len(s) != 64 {
			t.Fatalf("secrets differ or are not 32 hex-encoded bytes: %q", got)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestReadOrCreateRefusesAShortSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key_secret")
	if err := os.WriteFile(path, []byte("  short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOrCreate(path); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("err = %v, want a short secret refused", err)
	}
}
