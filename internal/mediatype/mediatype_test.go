package mediatype

import (
	"mime"
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
