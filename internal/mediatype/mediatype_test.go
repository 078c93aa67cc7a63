package mediatype

import (
	"mime"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		"text/event-stream":                    "text/event-stream",
		"Text/Event-Stream; charset=utf-8":     "text/event-stream",
		" application/json ;charset=UTF-8":     "application/json",
		"multipart/form-data; boundary=x":      "multipart/form-data",
		"text/event-stream; broken":            "text/event-stream",
		"":                                     "",
		"multipart/form-data;boundary=\"a;b\"": "multipart/form-data",
	} {
		if got := Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzOf checks that Of agrees with mime.ParseMediaType wherever that
// accepts the header.
func FuzzOf(f *testing.F) {
	f.Add("text/event-stream; charset=utf-8")
	f.Add("Multipart/Form-Data; boundary=\"x\"")
	f.Fuzz(func(t *testing.T, ct string) {
		mt, _, err := mime.ParseMediaType(ct)
		if err == nil && Of(ct) != mt {
			t.Fatalf("Of(%q) = %q, mime says %q", ct, Of(ct), mt)
		}
	})
}

func BenchmarkOf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Of("text/event-stream; charset=utf-8")
	}
}

func TestIsJSON(t *testing.T) {
	for _, tc := range []struct {
		name, contentType string
		want              bool
	}{
		{"plain", "application/json", true},
		{"any case", "Application/JSON", true},
		{"spaces", " application/json ", true},
		{"utf-8", "application/json; charset=utf-8", true},
		{"utf-8 in capitals, no space", "application/json;charset=UTF-8", true},
		{"utf-8 quoted", `application/json; Charset="utf-8"`, true},
		{"spaces around =", "application/json; charset = utf-8", true},
		{"none", "", false},
		{"utf-16", "application/json; charset=utf-16", false},
		{"latin-1", "application/json; charset=iso-8859-1", false},
		{"unterminated quote", `application/json; charset="utf-8`, false},
		{"another parameter", "application/json; profile=x", false},
		{"two parameters", "application/json; charset=utf-8; profile=x", false},
		{"charset twice", "application/json; charset=utf-8; charset=utf-16", false},
		{"parameter without value", "application/json; charset", false},
		{"trailing semicolon", "application/json;", false},
		{"suffix type", "application/vnd.api+json", false},
		{"look-alike", "application/jsonx", false},
		{"text/json", "text/json", false},
		{"text", "text/plain", false},
		{"form", "application/x-www-form-urlencoded", false},
		{"multipart", "multipart/form-data; boundary=x", false},
		{"two headers joined", "application/json, text/plain", false},
	} {
		if got := IsJSON(tc.contentType); got != tc.want {
			t.Errorf("%s: IsJSON(%q) = %v, want %v", tc.name, tc.contentType, got, tc.want)
		}
	}
}

// FuzzIsJSON checks that whatever IsJSON accepts, mime.ParseMediaType
// reads as application/json with at most a UTF-8 charset: the gateway
// never accepts a label a standard parser reads as something else.
func FuzzIsJSON(f *testing.F) {
	f.Add("application/json; charset=utf-8")
	f.Add(`application/json; charset="UTF-8"`)
	f.Add("application/json; charset=utf-8; x=y")
	f.Fuzz(func(t *testing.T, ct string) {
		if !IsJSON(ct) {
			return
		}
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			t.Fatalf("IsJSON(%q), but mime reads %q, %v", ct, mt, err)
		}
		for k, v := range params {
			if k != "charset" || !strings.EqualFold(v, "utf-8") {
				t.Fatalf("IsJSON(%q), but mime reads the parameter %s=%q", ct, k, v)
			}
		}
	})
}

func TestIsFormData(t *testing.T) {
	for ct, want := range map[string]bool{
		"multipart/form-data; boundary=x": true,
		"Multipart/Form-Data":             true,
		"multipart/mixed; boundary=x":     false,
		"application/json":                false,
		"":                                false,
	} {
		if got := IsFormData(ct); got != want {
			t.Errorf("IsFormData(%q) = %v, want %v", ct, got, want)
		}
	}
}
