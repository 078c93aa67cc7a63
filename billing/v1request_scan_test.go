package billing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// FuzzTopLevel checks that the scan of a valid body splits it exactly as
// encoding/json's decoder does, and refuses what it refuses.
func FuzzTopLevel(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"A":2}`, `{"a":"x","b":[1,{"c":"}"}],"d":{"e":"\""}}`,
		`{"mod\u0065l":"m","model":"n"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", "{\"\xff\":1,\"\xfe\":2}",
		`{"a":true,"b":false,"c":null,"d":-1.5e3}`, `[1]`, `"x"`, `{"a":1}x`, `{"a":1} {}`, "\ufeff{}",
		`{"a":}`, `{"a" : 1 , "b" : [ ] }`, `{"a\"b":1}`, `{"a\\b":1}`, `{"\u0001":1,"<&>":2}`, `{"stream":true,"Stream":false}`, `{"K":1,"` + "\u212a" + `":2}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range invalidBodies {
		f.Add([]byte(s))
	}
	// Past 16 members the repeats are found through a map: a repeat of
	// the first member, of a later one, and none.
	many := func(last string) []byte {
		b := []byte(`{`)
		for i := range 20 {
			b = fmt.Appendf(b, `"k%d":%d,`, i, i)
		}
		return append(b, `"`+last+`":0}`...)
	}
	f.Add(many("K0"))
	f.Add(many("k18"))
	f.Add(many("k20"))
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ferr := topLevel(body)
		slow, serr := topLevelChecked(body)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%q: scan error %v, decoder error %v", body, ferr, serr)
		}
		if ferr != nil {
			return
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: scan %d members, decoder %d", body, len(fast), len(slow))
		}
		for i := range fast {
			if fast[i].name != slow[i].name || !reflect.DeepEqual([]byte(fast[i].value), []byte(slow[i].value)) {
				t.Fatalf("%q: member %d: scan %q=%s, decoder %q=%s", body, i, fast[i].name, fast[i].value, slow[i].name, slow[i].value)
			}
		}
		// What the meter sends upstream after adding a member splits
		// back into the same members.
		again, err := topLevelChecked(encodeObject(fast))
		if err != nil || !reflect.DeepEqual(again, fast) && len(fast) > 0 {
			t.Fatalf("%q: encoded as %s: %v %v", body, encodeObject(fast), again, err)
		}
	})
}

// invalidBodies are bodies that are not one valid JSON object, of every
// kind the scan that checks a body as it splits it (jsonscan.ValidMembers)
// finds itself, and some whose name repeated comes before or after what
// is invalid.
var invalidBodies = []string{
	``, ` `, `[1]`, `"x"`, `{"a":1}x`, `{"a":1`, `{"a":"x`, `{"a`, `{"a" 1}`, `{a:1}`, `{1:1}`,
	`{"a":1,}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":1 "b":2}`, `{"a":[1}}`, `{"a":{"b":1]}`,
	`{"a":{"b":}}`, "{\"a\":\"x\ny\"}", "{\"a\x01\":1}", `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`,
	`{"a":"\"}`, `{"a":01}`, `{"a":-}`, `{"a":+1}`, `{"a":.5}`, `{"a":1.}`, `{"a":1e}`, `{"a":1e+}`,
	`{"a":0x10}`, `{"a":NaN}`, `{"a":True}`, `{"a":nul}`, `{"a":truex}`, `{'a':1}`, `{"a":1 /* c */}`,
	"{\"a\":1\v}", `{"a":1,"A":2,}`, `{"a":1,"b":x,"A":2}`, `{"a":1,"A":x}`, `{"a":1,"A":2}x`,
}

// A body that is not one valid JSON object is refused with the error
// encoding/json's decoder finds first, whichever finds it.
func TestTopLevelRefusesInvalidJSON(t *testing.T) {
	for _, body := range invalidBodies {
		_, err := topLevel([]byte(body))
		_, want := topLevelChecked([]byte(body))
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%.60q: error %v, want %v", body, err, want)
		}
	}
}

func TestPlainScalarsAgreeWithDecoder(t *testing.T) {
	for _, body := range []string{
		`{"model":"m"}`, `{"model":"m\u00e9"}`, "{\"model\":\"\xff\"}", `{"model":"a\"b"}`,
		`{"model":"m","stream":true}`, `{"model":"m","stream":false}`,
	} {
		got, err := ParseV1([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		fields, _ := topLevelChecked([]byte(body))
		var want V1Request
		for _, f := range fields {
			switch f.name {
			case "model":
				_ = jsonUnmarshal(f.value, &want.Model)
			case "stream":
				_ = jsonUnmarshal(f.value, &want.Stream)
			}
		}
		if got.Model != want.Model || got.Stream != want.Stream {
			t.Errorf("%s: model %q stream %v, want %q %v", body, got.Model, got.Stream, want.Model, want.Stream)
		}
	}
}

var jsonUnmarshal = func(b []byte, v any) error { return json.Unmarshal(b, v) }

// A common member name is given as the string made once, any other made
// from the body, and both read as the body spells them.
func TestMemberNameCommon(t *testing.T) {
	for _, raw := range []string{`"model"`, `"Model"`, `"messages"`, `"max_tokens"`, `"mod"`, `"modelx"`, `""`, `"é"`} {
		name, err := memberName([]byte(raw))
		if err != nil || name != raw[1:len(raw)-1] {
			t.Errorf("memberName(%s) = %q, %v", raw, name, err)
		}
	}
	raw := []byte(`"messages"`)
	if n := testing.AllocsPerRun(1000, func() { _, _ = memberName(raw) }); n != 0 {
		t.Errorf("a common name took %v allocations, want 0", n)
	}
}

// FuzzDecodeInt holds decodeInt to what encoding/json reads into an
// int64 from the same JSON value.
func FuzzDecodeInt(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `256`, `-5`, `1.0`, `1e2`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775808`, `-9223372036854775809`, `"5"`, `true`, `[]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return // the parse hands it valid values only
		}
		var want int64
		wantOK := json.Unmarshal(v, &want) == nil
		if got, ok := decodeInt(v); ok != wantOK || ok && got != want {
			t.Fatalf("%s: decodeInt %d %v, encoding/json %d %v", v, got, ok, want, wantOK)
		}
	})
}

// set writes the object encodeObject writes of the list with the member
// set: the body a stream is sent with when usage is asked for on the
// client's behalf.
func TestSetWritesAsEncodeObject(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{}`, `{"stream_options":{"include_usage":true}}`},
		{`{"model":"m","stream":true}`, `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`},
		{` { "mod\u0065l" : "m" , "stream_options" : null , "x" : [1, 2] } `, `{"model":"m","stream_options":{"include_usage":true},"x":[1, 2]}`},
		{`{"stream_options":{"x":1},"stream":true}`, `{"stream_options":{"x":1,"include_usage":true},"stream":true}`},
		{`{"<&>":1}`, `{"\u003c\u0026\u003e":1,"stream_options":{"include_usage":true}}`},
	} {
		fields, err := topLevel([]byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		var opts fieldList
		if v, ok := fields.get("stream_options"); ok && !isNull(v) {
			opts, _ = topLevel(v)
		}
		got := fields.set("stream_options", opts.set("include_usage", json.RawMessage("true")))
		if string(got) != tt.want {
			t.Errorf("%s: set wrote %s, want %s", tt.body, got, tt.want)
		}
	}
}

// A model name a body names again is the string the first one got, not
// a copy of its own: the parse of a body whose model was seen before
// allocates one object fewer. A name that does not fit the escapes-free
// form is read as before.
func TestParseV1SharesAModelNameSeenBefore(t *testing.T) {
	body := []byte(`{"model":"shared-model-1","messages":[]}`)
	first, err := ParseV1(body)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseV1(bytes.Clone(body))
	if err != nil {
		t.Fatal(err)
	}
	if again.Model != "shared-model-1" || unsafe.StringData(again.Model) != unsafe.StringData(first.Model) {
		t.Errorf("the second body's model %q is a string of its own", again.Model)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseV1(body) }); n != 0 && !testenv.RaceEnabled {
		t.Errorf("ParseV1 of a body naming a model seen before allocates %v objects, want none", n)
	}
	escaped, err := ParseV1([]byte(`{"model":"shared-\u006dodel-1","messages":[]}`))
	if err != nil || escaped.Model != "shared-model-1" {
		t.Errorf("an escaped model name read as %q, %v", escaped.Model, err)
	}
}
