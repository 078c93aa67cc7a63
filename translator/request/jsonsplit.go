package request

import (
	"bytes"
	"strings"
)

// The request body is checked once with json.Valid; after that, objects
// and arrays are split into their members by the functions below, which
// trust that the input is valid. They exist for speed: an inline image
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
	out, _, ok := splitObjectFolded(v, false)
	return out, ok
}

// splitObjectFolded is splitObject that, when refuseFolded is set, also
// reports the first key named twice in any letter case (dup), with false.
func splitObjectFolded(v []byte, refuseFolded bool) (out map[string]rawJSON, dup string, ok bool) {
	var seen map[string]struct{}
	if refuseFolded {
		seen = make(map[string]struct{})
	}
	out, ok = splitMembers(v, func(key string) bool {
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

// splitMembers does the work of splitObject, asking keep of every key in
// order; a false answer stops it with false.
func splitMembers(v []byte, keep func(key string) bool) (map[string]rawJSON, bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	out := make(map[string]rawJSON)
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return out, true
	}
	for i < len(v) {
		end, ok := skipValue(v, i)
		if !ok || v[i] != '"' {
			return nil, false
		}
		key, ok := decodeString(rawJSON(v[i:end]))
		if !ok || !keep(key) {
			return nil, false
		}
		i = skipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return nil, false
		}
		i = skipSpace(v, i+1)
		end, ok = skipValue(v, i)
		if !ok {
			return nil, false
		}
		out[key] = rawJSON(v[i:end])
		i = skipSpace(v, end)
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case ',':
			i = skipSpace(v, i+1)
		case '}':
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// splitArray returns the elements of a JSON array.
func splitArray(v []byte) ([]rawJSON, bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	out := []rawJSON{}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return out, true
	}
	for i < len(v) {
		end, ok := skipValue(v, i)
		if !ok {
			return nil, false
		}
		out = append(out, rawJSON(v[i:end]))
		i = skipSpace(v, end)
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case ',':
			i = skipSpace(v, i+1)
		case ']':
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// skipValue returns the end of the value that starts at v[i].
func skipValue(v []byte, i int) (int, bool) {
	if i >= len(v) {
		return 0, false
	}
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for i < len(v) {
			switch v[i] {
			case '"':
				end, ok := skipString(v, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default: // number, true, false, null
		start := i
		for i < len(v) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(v[i])) {
			i++
		}
		return i, i > start
	}
}

// skipString returns the end of the string whose quote is at v[i].
func skipString(v []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(v[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && v[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\r' || v[i] == '\n') {
		i++
	}
	return i
}
