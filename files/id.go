package files

import (
	"crypto/rand"
	"strings"
	"time"
)

// IDPrefix starts every file id, as in OpenAI's ids.
const IDPrefix = "file-"

// A file id is "file-" followed by 24 base62 characters: 8 encode the
// creation time in milliseconds since the Unix epoch (good until the year
// 8888) and 16 are random (95 bits). The alphabet is in ASCII order, so
// ids sort bytewise by creation time: List pages by id, and a cursor
// stays valid after the file it names is deleted.
const (
	idTimeLen   = 8
	idRandomLen = 16
	idLen       = len(IDPrefix) + idTimeLen + idRandomLen
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// NewID returns a fresh file id created at now.
func NewID(now time.Time) string {
	var b [idLen]byte
	copy(b[:], IDPrefix)
	ms := uint64(max(now.UnixMilli(), 0))
	for i := len(IDPrefix) + idTimeLen - 1; i >= len(IDPrefix); i-- {
		b[i] = base62[ms%62]
		ms /= 62
	}
	// Rejection sampling keeps the characters uniform: 248 is the
	// largest multiple of 62 that fits in a byte.
	var rnd [32]byte
	for i := len(IDPrefix) + idTimeLen; i < idLen; {
		rand.Read(rnd[:])
		for _, c := range rnd {
			if c < 248 && i < idLen {
				b[i] = base62[c%62]
				i++
			}
		}
	}
	return string(b[:])
}

// ValidID reports whether s has the shape of a file id. It does not say
// whether such a file exists.
func ValidID(s string) bool {
	if len(s) != idLen || !strings.HasPrefix(s, IDPrefix) {
		return false
	}
	for i := len(IDPrefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}

// blobKey is where a file's bytes live in the blob store. The two-level
// fan-out on the id's last (random) characters keeps directories of the
// local store small.
func blobKey(id string) string {
	return "files/" + id[len(id)-2:] + "/" + id
}
