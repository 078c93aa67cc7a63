// Package secrets keeps the secrets a node generates for itself in files
// of its data directory, such as the key hashing and admin token secrets
// of an embedded store.
package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReadOrCreate returns the secret in path, creating the file with a
// fresh secret (32 random bytes, hex-encoded) if there is none. The new file is written aside and linked
// into place, which fails if path exists: a server and a CLI started
// together agree on one secret and never read a half-written file.
func ReadOrCreate(path string) ([]byte, error) {
	if secret, err := os.ReadFile(path); err == nil {
		return check(secret)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	_, werr := tmp.WriteString(hex.EncodeToString(buf))
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	secret, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return check(secret)
}

// ReadOrEphemeral returns the secret in path or, if there is none, a
// fresh one that is not written anywhere: what a config that is only
// validated needs, which must leave the data directory as it found it.
func ReadOrEphemeral(path string) ([]byte, error) {
	if secret, err := os.ReadFile(path); err == nil {
		return check(secret)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	return []byte(hex.EncodeToString(buf)), nil
}

// check trims secret and refuses one shorter than 32 bytes.
func check(secret []byte) ([]byte, error) {
	secret = []byte(strings.TrimSpace(string(secret)))
	if len(secret) < 32 {
		return nil, fmt.Errorf("file holds %d bytes, want at least 32", len(secret))
	}
	return secret, nil
}
