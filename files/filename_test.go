package files_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/files"
)

func TestSanitizeFilename(t *testing.T) {
	long := strings.Repeat("é", 200) + ".pdf" // 404 bytes
	tests := []struct {
		name string
		in   string
		want string // "" means ErrEmptyFilename
	}{
		{"plain", "report.pdf", "report.pdf"},
		{"unicode kept", "Ångström résumé ✓.docx", "Ångström résumé ✓.docx"},
		{"unix path", "/etc/passwd", "passwd"},
		{"traversal", "../../secret.txt", "secret.txt"},
		{"windows path", `C:\Users\x\report.pdf`, "report.pdf"},
		{"mixed separators", `a/b\c/d.txt`, "d.txt"},
		{"NUL", "a\x00b.txt", "ab.txt"},
		{"control characters", "a\r\nb\tc\x1b[31m.txt", "abc[31m.txt"},
		{"C1 control and DEL", "a\u0085b\x7f.txt", "ab.txt"},
		{"bidi override", "invoice\u202Efdp.exe", "invoicefdp.exe"},
		{"bidi isolates and marks", "a\u2066b\u2069\u200Fc.txt", "abc.txt"},
		{"surrounding spaces", "  spaced.txt  ", "spaced.txt"},
		{"invalid UTF-8 replaced", "caf\xe9.txt", "caf\uFFFD.txt"},
		{"empty", "", ""},
		{"only a directory", "dir/", ""},
		{"only controls", "\x00\x01\x02", ""},
		{"dot", ".", ""},
		{"dot dot", "..", ""},
		{"path ending in dot dot", "a/..", ""},
		{"hidden file kept", ".env", ".env"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := files.SanitizeFilename(tc.in)
			if tc.want == "" {
				if !errors.Is(err, files.ErrEmptyFilename) {
					t.Fatalf("SanitizeFilename(%q) = %q, %v; want ErrEmptyFilename", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("SanitizeFilename(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}

	t.Run("long name keeps its extension", func(t *testing.T) {
		got, err := files.SanitizeFilename(long)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > files.MaxFilenameBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, ".pdf") {
			t.Fatalf("got %d bytes, valid UTF-8 %v: %q", len(got), utf8.ValidString(got), got)
		}
		if len(got) < files.MaxFilenameBytes-1 {
			t.Fatalf("cut to %d bytes, more than needed", len(got))
		}
	})
	t.Run("long name with a long extension", func(t *testing.T) {
		got, _ := files.SanitizeFilename(strings.Repeat("a", 100) + "." + strings.Repeat("€", 100))
		if len(got) > files.MaxFilenameBytes || !utf8.ValidString(got) {
			t.Fatalf("got %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
		}
	})
}

func FuzzSanitizeFilename(f *testing.F) {
	for _, s := range []string{"a.pdf", `C:\x\y.txt`, "../..", "a\u202Eb", strings.Repeat("€", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := files.SanitizeFilename(in)
		if err != nil {
			return
		}
		if got == "" || got == "." || got == ".." || len(got) > files.MaxFilenameBytes ||
			!utf8.ValidString(got) || strings.ContainsAny(got, "/\\\x00") {
			t.Fatalf("SanitizeFilename(%q) = %q", in, got)
		}
	})
}
