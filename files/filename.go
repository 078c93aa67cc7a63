package files

import (
	"errors"
	"path"
	"strings"
	"unicode"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// MaxFilenameBytes bounds a stored filename, as most filesystems bound a
// path component.
const MaxFilenameBytes = 255

// maxExtBytes is the longest extension SanitizeFilename keeps when it
// has to shorten a name.
const maxExtBytes = 16

// ErrEmptyFilename is returned by SanitizeFilename when nothing usable
// remains of a name.
var ErrEmptyFilename = errors.New("files: empty filename")

// SanitizeFilename turns the filename a client sent into the name stored
// as metadata and shown in Content-Disposition. A filename is only ever
// metadata: blob keys are derived from file ids, never from names.
//
// It keeps the last component of a path written with either slash or
// backslash (browsers on Windows send "C:\Users\x\report.pdf"), replaces
// invalid UTF-8 with U+FFFD, drops control characters (NUL, C0, DEL, C1)
// and the bidirectional-override and isolate characters that can make
// "cod.exe" display as "exe.doc", trims surrounding spaces, and refuses
// what is left if it is empty, "." or "..". A name longer than
// MaxFilenameBytes is cut on a character boundary, keeping its extension
// when that is short, because the extension takes part in the format
// check.
func SanitizeFilename(name string) (string, error) {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || bidiControl(r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "" || name == "." || name == ".." {
		return "", ErrEmptyFilename
	}
	if len(name) > MaxFilenameBytes {
		name = shorten(name, MaxFilenameBytes)
	}
	return name, nil
}

// bidiControl reports the Unicode formatting characters that reorder
// displayed text (LRE..RLO, LRI..PDI) and the marks LRM, RLM, ALM.
func bidiControl(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' ||
		r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// shorten cuts name to at most limit bytes without splitting a UTF-8
// sequence, keeping a short extension.
func shorten(name string, limit int) string {
	ext := path.Ext(name)
	if len(ext) > maxExtBytes || len(ext) == len(name) {
		ext = ""
	}
	stem := name[:len(name)-len(ext)]
	return clip.Bytes(stem, limit-len(ext)) + ext
}
