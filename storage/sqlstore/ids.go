package sqlstore

import "crypto/rand"

const (
	base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// idChars random base62 characters carry about 131 bits, as much as a
	// random UUID and then some: ids can be shown to clients without
	// letting them guess their neighbours.
	idChars = 22
)

// newID returns prefix followed by idChars random base62 characters.
func newID(prefix string) string {
	b := make([]byte, len(prefix)+idChars)
	copy(b, prefix)
	fillBase62(b[len(prefix):])
	return string(b)
}

// fillBase62 fills out with random base62 characters.
func fillBase62(out []byte) {
	var src randomBase62
	src.fill(out)
}

// randRead is crypto/rand.Read; tests count its calls.
var randRead = rand.Read

// randomBase62 hands out random base62 characters from bytes it reads
// from crypto/rand 512 at a time: a batch's ids take one read for every
// 40 or so, where a read for each was 2 – 3% of the ledger writer's CPU
// (BenchmarkWriterBatch in storage/sqlite). Its zero value is ready to
// use; it is not safe for concurrent use.
type randomBase62 struct {
	buf   [512]byte
	left  int  // the last left bytes of buf are unused
	began bool // buf was read into
}

// fill fills out with random base62 characters.
func (r *randomBase62) fill(out []byte) {
	for n := 0; n < len(out); {
		if r.left == 0 {
			// The first read is as small as it was for one id alone.
			want := len(r.buf)
			if !r.began {
				want, r.began = 32, true
			}
			randRead(r.buf[len(r.buf)-want:]) // never fails (crypto/rand.Read panics instead)
			r.left = want
		}
		c := r.buf[len(r.buf)-r.left]
		r.left--
		// 248 = 4*62: rejecting the bytes above it keeps every
		// character equally likely.
		if c >= 248 {
			continue
		}
		out[n] = base62[c%62]
		n++
	}
}

// newTimeID returns prefix, the time at (microseconds) in fixed-width
// hex, then 12 random base62 characters (about 71 bits). Ids of rows
// appended in time order then sort as they were made, and each insert
// lands at the end of the id index instead of on a random page of it:
// a batch of ledger entries writes one index page, not one each.
func newTimeID(prefix string, at int64) string {
	var b [8 + timeIDChars]byte // every prefix in use fits
	return string(appendTimeID(b[:0], prefix, at))
}

// timeIDChars is the length of a time id after its prefix.
const timeIDChars = 16 + 12

// appendTimeID appends newTimeID(prefix, at) to b.
func appendTimeID(b []byte, prefix string, at int64) []byte {
	var src randomBase62
	return src.appendTimeID(b, prefix, at)
}

// appendTimeID appends newTimeID(prefix, at) to b, its random characters
// from r.
func (r *randomBase62) appendTimeID(b []byte, prefix string, at int64) []byte {
	const hexDigits, random = 16, 12
	b = append(b, prefix...)
	for shift := 4 * (hexDigits - 1); shift >= 0; shift -= 4 {
		b = append(b, "0123456789abcdef"[uint64(at)>>shift&0xf])
	}
	b = append(b, make([]byte, random)...)
	r.fill(b[len(b)-random:])
	return b
}
