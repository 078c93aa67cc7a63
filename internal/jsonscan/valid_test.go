package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases are bodies ValidMembers must judge as json.Valid does, with
// every kind of invalid JSON it looks for itself.
var validCases = []struct {
	name string
	in   string
	ok   bool
}{
	{"empty object", `{}`, true},
	{"white space around", " \t\r\n{ \"a\" : 1 } \n", true},
	{"every kind of value", `{"s":"x","n":-1.5e+3,"z":0,"f":0.25E-2,"t":true,"F":false,"null":null,"a":[1,[],{}],"o":{"p":[{"q":"}"}]}}`, true},
	{"escapes", `{"e":"\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"}`, true},
	{"invalid UTF-8, as json.Valid takes it", "{\"a\":\"\xff\xfe\",\"\xc3\":1}", true},
	{"lone surrogate escape", `{"a":"\ud800"}`, true},

	{"nothing", ``, false},
	{"white space alone", ` `, false},
	{"byte-order mark", "\ufeff{}", false},
	{"array", `[1]`, false},
	{"string", `"x"`, false},
	{"data after the object", `{"a":1}x`, false},
	{"a second object", `{"a":1} {}`, false},
	{"unterminated object", `{"a":1`, false},
	{"unterminated string", `{"a":"x`, false},
	{"unterminated key", `{"a`, false},
	{"missing colon", `{"a" 1}`, false},
	{"missing value", `{"a":}`, false},
	{"bare key", `{a:1}`, false},
	{"number key", `{1:1}`, false},
	{"trailing comma in object", `{"a":1,}`, false},
	{"trailing comma in array", `{"a":[1,]}`, false},
	{"leading comma in array", `{"a":[,1]}`, false},
	{"missing comma", `{"a":[1 2]}`, false},
	{"missing comma between members", `{"a":1 "b":2}`, false},
	{"wrong closing bracket", `{"a":[1}}`, false},
	{"wrong closing brace", `{"a":{"b":1]}`, false},
	{"unclosed nested array", `{"a":[1,2}`, false},
	{"control character in a string", "{\"a\":\"x\ny\"}", false},
	{"control character in a key", "{\"a\x01\":1}", false},
	{"unknown escape", `{"a":"\x"}`, false},
	{"short unicode escape", `{"a":"\u12"}`, false},
	{"non-hex unicode escape", `{"a":"\u12g4"}`, false},
	{"escape at the end", `{"a":"\`, false},
	{"escaped closing quote", `{"a":"\"}`, false},
	{"leading zero", `{"a":01}`, false},
	{"minus alone", `{"a":-}`, false},
	{"plus sign", `{"a":+1}`, false},
	{"bare fraction", `{"a":.5}`, false},
	{"empty fraction", `{"a":1.}`, false},
	{"empty exponent", `{"a":1e}`, false},
	{"signed empty exponent", `{"a":1e+}`, false},
	{"hex number", `{"a":0x10}`, false},
	{"NaN", `{"a":NaN}`, false},
	{"Infinity", `{"a":-Infinity}`, false},
	{"capitalised literal", `{"a":True}`, false},
	{"cut literal", `{"a":nul}`, false},
	{"literal run on", `{"a":truex}`, false},
	{"single quotes", `{'a':1}`, false},
	{"comment", `{"a":1 /* c */}`, false},
	{"vertical tab as white space", "{\"a\":1\v}", false},
	{"non-breaking space as white space", "{\"a\":1\u00a0}", false},
}

func TestValidMembers(t *testing.T) {
	for _, tt := range validCases {
		t.Run(tt.name, func(t *testing.T) {
			if want := json.Valid([]byte(tt.in)) && strings.HasPrefix(strings.TrimLeft(tt.in, " \t\r\n"), "{"); want != tt.ok {
				t.Fatalf("the case is wrong: json.Valid(%q) disagrees with ok %v", tt.in, tt.ok)
			}
			if got := ValidMembers([]byte(tt.in), func(k, v []byte) bool { return true }); got != tt.ok {
				t.Errorf("ValidMembers(%q) = %v, want %v", tt.in, got, tt.ok)
			}
		})
	}
}

// json.Valid lets arrays and objects nest 10,000 deep, and no deeper.
func TestValidMembersDepth(t *testing.T) {
	nested := func(depth int) []byte {
		inner := depth - 1 // the object itself is one
		return []byte(`{"a":` + strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}`)
	}
	for _, depth := range []int{33, 9999, 10000, 10001, 20000} {
		b := nested(depth)
		if got, want := ValidMembers(b, func(k, v []byte) bool { return true }), json.Valid(b); got != want {
			t.Errorf("%d deep: ValidMembers %v, json.Valid %v", depth, got, want)
		}
	}
}

// FuzzValidMembers holds ValidMembers to json.Valid and Members: it
// accepts exactly the valid objects, and splits them as Members does.
func FuzzValidMembers(f *testing.F) {
	for _, tt := range validCases {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte(`{"a":[{"b":[[{"c":{}}]]}],"d":"\u0041"}`))
	f.Fuzz(func(t *testing.T, v []byte) {
		var got, want []string
		ok := ValidMembers(v, func(k, val []byte) bool {
			got = append(got, string(k)+"="+string(val))
			return true
		})
		wantOK := json.Valid(v) && Members(v, func(k, val []byte) bool {
			want = append(want, string(k)+"="+string(val))
			return true
		})
		if ok != wantOK {
			t.Fatalf("%q: ValidMembers %v, json.Valid and Members %v", v, ok, wantOK)
		}
		if ok && strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("%q: ValidMembers split %q, Members %q", v, got, want)
		}
	})
}

func TestValidMembersStopsWhenAsked(t *testing.T) {
	n := 0
	if ValidMembers([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false }) || n != 1 {
		t.Errorf("ValidMembers went on after f said stop: %d calls", n)
	}
}

// BenchmarkValidMembers is the check and split of a short answer and of
// a body with an inline image, in one pass, against json.Valid then
// Members.
func BenchmarkValidMembers(b *testing.B) {
	answer := []byte(`{"id":"chatcmpl-000000000001","object":"chat.completion","created":1795493102,"model":"svc-3",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Demo backend reply. Your message has 2 tokens (digest 7998e1ad): \"Benchmark me\"",` +
		`"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":18,"total_tokens":26}}`)
	image := []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
		strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 1<<15) + `"}}]}]}`)
	member := func(k, v []byte) bool { return true }
	for _, tc := range []struct {
		name string
		v    []byte
	}{{"answer", answer}, {"image", image}} {
		b.Run(tc.name+"/ValidMembers", func(b *testing.B) {
			b.SetBytes(int64(len(tc.v)))
			for b.Loop() {
				if !ValidMembers(tc.v, member) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(tc.name+"/Valid+Members", func(b *testing.B) {
			b.SetBytes(int64(len(tc.v)))
			for b.Loop() {
				if !json.Valid(tc.v) || !Members(tc.v, member) {
					b.Fatal("refused")
				}
			}
		})
	}
}

// Every byte, at every place in a string long enough to be scanned a
// word at a time, is judged as json.Valid judges it.
func TestValidMembersEveryByteInALongString(t *testing.T) {
	for at := range 20 {
		for c := range 256 {
			text := []byte(strings.Repeat("a", 20))
			text[at] = byte(c)
			v := append(append([]byte(`{"k":"`), text...), `"}`...)
			if got, want := ValidMembers(v, func(k, v []byte) bool { return true }), json.Valid(v); got != want {
				t.Errorf("byte %#x at %d: ValidMembers %v, json.Valid %v", c, at, got, want)
			}
		}
	}
}

// Two bytes side by side in a word, where the borrow of a stop may mark
// the byte after it: the string ends, or is refused, where json.Valid has
// it.
func TestValidMembersBytePairsInAWord(t *testing.T) {
	edges := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '#', '\\', ']', 'u', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	for at := range 9 {
		for _, c1 := range edges {
			for _, c2 := range edges {
				text := []byte(strings.Repeat("a", 12))
				text[at], text[at+1] = c1, c2
				v := append(append([]byte(`{"k":"`), text...), `"}`...)
				if got, want := ValidMembers(v, func(k, v []byte) bool { return true }), json.Valid(v); got != want {
					t.Errorf("%#x %#x at %d: ValidMembers %v, json.Valid %v", c1, c2, at, got, want)
				}
			}
		}
	}
}
