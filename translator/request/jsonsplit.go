package request

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/jsonscan"
)

// The request body is checked once, as json.Valid would, while its
// top-level members are split (jsonscan.ValidMembers); after that,
// objects and arrays are split into their members by the functions
// below, which trust that the input is valid. They exist for speed: an inline image
// makes one string of many megabytes, and every level of json.Unmarshal
// into json.RawMessage would scan it twice more, while these skip a
// string with bytes.IndexByte. They never panic on invalid input; they
// report false instead.
//
// BenchmarkParse keeps that claim honest. Measured on a shared 2-core
// AMD EPYC (go1.26, ns/op, best of three):
//
//	body                     these functions   json.RawMessage per level   one typed decode
//	short chat (3 messages)            7,500                      21,600              8,900
//	long conversation (60 KB)      1,150,000                   2,510,000          1,210,000
//	three 1 MB images             24,500,000                 204,700,000         87,600,000
//	50 objects of 5 KB             3,890,000                   6,070,000          2,090,000
//
// "json.RawMessage per level" is these functions replaced by json.Unmarshal
// into map[string]json.RawMessage, []json.RawMessage and string, with the
// json.Valid pass dropped: the same rules and errors, and 1.5 to 8 times
// slower. "One typed decode" is a single json.Unmarshal into structs with
// json.RawMessage for content and image_url, then one more per content
// array and image: a lower bound that checks nothing, and that cannot
// keep the rules as they are, because encoding/json matches keys without
// regard to case ("Stream" would set stream) and reports type errors in
// its own order. It wins only on the objects map, whose entries Parse
// decodes with json.Unmarshal after the json.Valid pass has already
// scanned them; it is no faster on chats and 3.5 times slower on images,
// the largest bodies Parse sees. So the splitter stays.

// members are the members of a JSON object, found by key. An object of
// a request has a handful (a message: role and content; a body: model,
// messages, stream and a few more), and a list of their places in the
// object takes a fraction of a map's room: a map of any size started at
// about 400 bytes, and its keys were strings of their own, all garbage
// as soon as the request was parsed, per object. A repeated key keeps
// its last value, as encoding/json has it. An object of more than
// maxListed members, which a client could send to make every look-up
// long, is kept in a map instead.
type members struct {
	src   []byte   // the object, which the places in list are of
	list  []member // in order, while there are few
	byKey map[string]rawJSON
}

// member is where a member's key (inside its quotes) and value are in
// its object.
type member struct {
	key, keyEnd, val, valEnd int32
}

// maxListed is the most members kept in a list.
const maxListed = 32

// splitObject returns the members of a JSON object.
func splitObject(v []byte) (members, bool) {
	return splitMembers(v, false)
}

// splitBody splits a request body not yet checked: it reports false,
// too, when the body is not valid JSON as json.Valid has it, and, when
// refuseFolded is set, the first key named twice in any letter case
// (dup), with false.
func splitBody(v []byte, refuseFolded bool) (out members, dup string, ok bool) {
	out, ok = splitMembers(v, true)
	if !ok || !refuseFolded {
		return out, "", ok
	}
	if dup = out.foldedTwice(); dup != "" {
		return members{}, dup, false
	}
	return out, "", true
}

// splitMembers does the work of splitObject and splitBody, checking v
// as it goes when valid is set.
func splitMembers(v []byte, valid bool) (members, bool) {
	ms := members{src: v}
	if len(v) > math.MaxInt32 {
		// Places in so long an object do not fit a member.
		ms.byKey = make(map[string]rawJSON)
	}
	var ok bool
	if valid {
		ok = jsonscan.ValidMembers(v, ms.add)
	} else {
		ok = jsonscan.Members(v, ms.add)
	}
	if !ok {
		return members{}, false
	}
	return ms, true
}

// add adds the member whose quoted key and value are k and v, both
// slices of ms.src, and reports false for a key that is not a JSON
// string.
func (ms *members) add(k, v []byte) bool {
	if len(k) < 2 || k[0] != '"' {
		return false
	}
	if ms.byKey == nil && len(ms.list) < maxListed {
		if _, plain := plainKey(k); !plain && !isString(k) {
			return false
		}
		if ms.list == nil {
			ms.list = make([]member, 0, 4)
		}
		ms.list = append(ms.list, member{key: ms.at(k) + 1, keyEnd: ms.at(k) + int32(len(k)) - 1, val: ms.at(v), valEnd: ms.at(v) + int32(len(v))})
		return true
	}
	if ms.byKey == nil {
		ms.byKey = make(map[string]rawJSON, 2*maxListed)
		for _, m := range ms.list {
			ms.byKey[ms.keyOf(m)] = ms.valueOf(m)
		}
		ms.list = nil
	}
	key, ok := decodeString(rawJSON(k))
	if ok {
		ms.byKey[key] = rawJSON(v)
	}
	return ok
}

// at is where b, a slice of ms.src, starts in it: a slice's capacity
// runs to the end of its array, the same for both.
func (ms *members) at(b []byte) int32 { return int32(cap(ms.src) - cap(b)) }

// plainKey returns the inside of the quoted key k when it is the key as
// it is: no escapes, valid UTF-8.
func plainKey(k []byte) ([]byte, bool) {
	inner := k[1 : len(k)-1]
	return inner, bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner)
}

// isString reports whether k decodes as a JSON string.
func isString(k []byte) bool {
	_, ok := decodeString(k)
	return ok
}

func (ms *members) quotedKey(m member) []byte { return ms.src[m.key-1 : m.keyEnd+1] }

func (ms *members) keyOf(m member) string {
	key, _ := decodeString(ms.quotedKey(m))
	return key
}

func (ms *members) valueOf(m member) rawJSON { return rawJSON(ms.src[m.val:m.valEnd]) }

// get returns the value of key, if present.
func (ms *members) get(key string) (rawJSON, bool) {
	if ms.byKey != nil {
		v, ok := ms.byKey[key]
		return v, ok
	}
	for i := len(ms.list) - 1; i >= 0; i-- {
		m := ms.list[i]
		// A key's JSON takes one to six bytes for each byte it decodes
		// to, and an invalid byte decodes to three: a key of another
		// length is passed over unread, however long a client made it.
		if n := int(m.keyEnd - m.key); 3*n < len(key) || n > 6*len(key) {
			continue
		}
		if inner, plain := plainKey(ms.quotedKey(m)); plain && string(inner) == key || !plain && ms.keyOf(m) == key {
			return ms.valueOf(m), true
		}
	}
	return nil, false
}

// keys returns the distinct keys, in no particular order.
func (ms *members) keys() []string {
	if ms.byKey != nil {
		return slices.Collect(maps.Keys(ms.byKey))
	}
	seen := make(map[string]struct{}, len(ms.list))
	for _, m := range ms.list {
		seen[ms.keyOf(m)] = struct{}{}
	}
	return slices.Collect(maps.Keys(seen))
}

// maxPairedKey is the longest key foldedTwice compares with every other
// in place.
const maxPairedKey = 64

// foldedTwice returns the first key whose name in lower case an earlier
// key has too, or "" when none has. Short ASCII keys without escapes,
// those of every request, are compared with each other where they are;
// any other object is read again with a map of its keys in lower case,
// so that no body makes the comparisons long.
func (ms *members) foldedTwice() string {
	if ms.byKey == nil && ms.shortASCIIKeys() {
		for j, b := range ms.list {
			kb := ms.src[b.key:b.keyEnd]
			for _, a := range ms.list[:j] {
				if equalFoldASCII(ms.src[a.key:a.keyEnd], kb) {
					return string(kb)
				}
			}
		}
		return ""
	}
	seen := make(map[string]struct{})
	dup := ""
	jsonscan.Members(ms.src, func(k, _ []byte) bool {
		key, _ := decodeString(rawJSON(k))
		fold := strings.ToLower(key)
		if _, twice := seen[fold]; twice {
			dup = key
			return false
		}
		seen[fold] = struct{}{}
		return true
	})
	return dup
}

// shortASCIIKeys reports whether every key is ASCII without escapes and
// at most maxPairedKey bytes long: its own name, which strings.ToLower
// lowers byte by byte.
func (ms *members) shortASCIIKeys() bool {
	for _, m := range ms.list {
		k := ms.src[m.key:m.keyEnd]
		if len(k) > maxPairedKey {
			return false
		}
		for _, c := range k {
			if c >= utf8.RuneSelf || c == '\\' {
				return false
			}
		}
	}
	return true
}

// equalFoldASCII reports whether the ASCII a and b are the same in lower
// case.
func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// splitArray returns the elements of a JSON array.
func splitArray(v []byte) ([]rawJSON, bool) {
	out := []rawJSON{}
	if !jsonscan.Elements(v, func(val []byte) bool { out = append(out, rawJSON(val)); return true }) {
		return nil, false
	}
	return out, true
}
