package policy

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/google/uuid"
)

// ValidRequestID reports whether a caller's X-Request-Id is a plain token
// of at most 128 characters: letters, digits, '.', '_', ':' and '-'.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewRequestID is the id of a request that came without one of its own: a
// random UUID (version 4). Its bits come from the runtime's ChaCha8
// generator (math/rand/v2), seeded from the system and drawn without a
// system call: a request id names a request and guards nothing, and
// reading the system's random source for it cost about 2% of the CPU of
// a request.
func NewRequestID() string { return newRequestUUID().String() }

func newRequestUUID() uuid.UUID {
	var b uuid.UUID
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return b
}
