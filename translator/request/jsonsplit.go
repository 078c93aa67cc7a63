package request

import (
	"strings"

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

// splitObject returns the members of a JSON object. A repeated key keeps
// its last value, as encoding/json does.
func splitObject(v []byte) (map[string]rawJSON, bool) {
	return splitMembers(jsonscan.Members, v, func(string) bool { return true })
}

// splitBody splits a request body not yet checked: it reports false,
// too, when the body is not valid JSON as json.Valid has it, and, when
// refuseFolded is set, the first key named twice in any letter case
// (dup), with false.
func splitBody(v []byte, refuseFolded bool) (out map[string]rawJSON, dup string, ok bool) {
	var seen map[string]struct{}
	if refuseFolded {
		seen = make(map[string]struct{})
	}
	out, ok = splitMembers(jsonscan.ValidMembers, v, func(key string) bool {
		if seen == nil {
			return true
		}
		fold := strings.ToLower(key)
		if _, twice := seen[fold]; twice {
			dup = key
			return false
		}
		seen[fold] = struct{}{}
		return true
	})
	return out, dup, ok
}

// splitMembers does the work of splitObject and splitBody with scan,
// asking keep of every key in order; a false answer stops it with false.
func splitMembers(scan func([]byte, func(k, val []byte) bool) bool, v []byte, keep func(key string) bool) (map[string]rawJSON, bool) {
	out := make(map[string]rawJSON)
	ok := scan(v, func(k, val []byte) bool {
		key, ok := decodeString(rawJSON(k))
		if !ok || !keep(key) {
			return false
		}
		out[key] = rawJSON(val)
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// splitArray returns the elements of a JSON array.
func splitArray(v []byte) ([]rawJSON, bool) {
	out := []rawJSON{}
	if !jsonscan.Elements(v, func(val []byte) bool { out = append(out, rawJSON(val)); return true }) {
		return nil, false
	}
	return out, true
}
