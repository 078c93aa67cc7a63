package files

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// Format is a file format the Files API accepts (spec 4.2).
type Format struct {
	Name string   // short name, e.g. "docx"
	MIME string   // media type stored with the file and sent on download
	Exts []string // filename extensions that may carry it, lower case, with the dot
}

// Accepted formats, in the spec's order. Content decides the format;
// the filename's extension must then agree with it.
var (
	FormatPNG  = Format{"png", "image/png", []string{".png"}}
	FormatJPEG = Format{"jpeg", "image/jpeg", []string{".jpg", ".jpeg", ".jpe"}}
	FormatWebP = Format{"webp", "image/webp", []string{".webp"}}
	FormatGIF  = Format{"gif", "image/gif", []string{".gif"}}
	FormatMP4  = Format{"mp4", "video/mp4", []string{".mp4", ".m4v", ".mov", ".qt"}}
	FormatWebM = Format{"webm", "video/webm", []string{".webm"}}
	FormatMOV  = Format{"mov", "video/quicktime", []string{".mov", ".qt", ".mp4", ".m4v"}}
	FormatPDF  = Format{"pdf", "application/pdf", []string{".pdf"}}
	FormatDOCX = Format{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []string{".docx"}}
	FormatXLSX = Format{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []string{".xlsx"}}
	FormatCSV  = Format{"csv", "text/csv; charset=utf-8", []string{".csv"}}
	FormatTXT  = Format{"txt", "text/plain; charset=utf-8", []string{".txt"}}
	FormatMD   = Format{"md", "text/markdown; charset=utf-8", []string{".md", ".markdown"}}
)

// MP4 and QuickTime are both ISO base media files and cameras label them
// freely (.mov holding an "isom" brand is common), so their extensions
// are interchangeable; the stored type follows the content's brand.

// Formats lists every accepted format.
var Formats = []Format{
	FormatPNG, FormatJPEG, FormatWebP, FormatGIF, FormatMP4, FormatWebM, FormatMOV,
	FormatPDF, FormatDOCX, FormatXLSX, FormatCSV, FormatTXT, FormatMD,
}

var textFormats = []Format{FormatCSV, FormatTXT, FormatMD}

// headLen is how much of the start of a file the magic checks look at.
const headLen = 512

// Sniffer judges a file's format. Write feeds it the content as it
// streams to storage (the byte-level checks need one pass); Judge then
// decides, reading back through random access only for zip-based Office
// files, whose central directory is at the end. A Sniffer is used by one
// goroutine; its zero value is ready for use.
type Sniffer struct {
	head []byte
	size int64
	text textCheck
}

// Write implements io.Writer. It never fails.
func (s *Sniffer) Write(p []byte) (int, error) {
	if len(s.head) < headLen {
		s.head = append(s.head, p[:min(len(p), headLen-len(s.head))]...)
	}
	s.size += int64(len(p))
	s.text.write(p)
	return len(p), nil
}

// Size is the number of bytes written so far.
func (s *Sniffer) Size() int64 { return s.size }

// Judge returns the format of the content written so far, which ra must
// hold in full, given the filename it was uploaded under. A refusal
// wraps ErrInvalidFormat.
func (s *Sniffer) Judge(filename string, ra io.ReaderAt) (Format, error) {
	if s.size == 0 {
		return Format{}, errInvalidFormat("The file is empty.")
	}
	ext := strings.ToLower(path.Ext(filename))
	f, ok := magicFormat(s.head)
	switch {
	case ok:
	case bytes.HasPrefix(s.head, zipMagic):
		var err error
		if f, err = officeFormat(ra, s.size); err != nil {
			return Format{}, err
		}
	case s.text.valid():
		for _, tf := range textFormats {
			if slices.Contains(tf.Exts, ext) {
				return tf, nil
			}
		}
		return Format{}, unsupported(ext)
	default:
		return Format{}, unsupported(ext)
	}
	if !slices.Contains(f.Exts, ext) {
		return Format{}, errInvalidFormat(fmt.Sprintf(
			"The file's content is %s, which does not match its filename extension %q.", f.Name, ext))
	}
	return f, nil
}

func unsupported(ext string) *Error {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	return errInvalidFormat(fmt.Sprintf(
		"Unsupported file format (filename extension %q). Supported formats, judged by content: %s.",
		ext, strings.Join(names, ", ")))
}

// DetectFormat judges content of the given size held by r, reading all
// of it once. Use a Sniffer to judge content while it streams.
func DetectFormat(filename string, r io.ReaderAt, size int64) (Format, error) {
	var s Sniffer
	if _, err := io.Copy(&s, io.NewSectionReader(r, 0, size)); err != nil {
		return Format{}, err
	}
	return s.Judge(filename, r)
}

var zipMagic = []byte("PK\x03\x04")

// magicFormat recognises the formats that a file's first bytes decide.
func magicFormat(h []byte) (Format, bool) {
	switch {
	case bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n")) && len(h) >= 16 && string(h[12:16]) == "IHDR":
		return FormatPNG, true
	case bytes.HasPrefix(h, []byte{0xFF, 0xD8, 0xFF}):
		return FormatJPEG, true
	case bytes.HasPrefix(h, []byte("GIF87a")) || bytes.HasPrefix(h, []byte("GIF89a")):
		return FormatGIF, true
	case len(h) >= 16 && string(h[0:4]) == "RIFF" && string(h[8:12]) == "WEBP" &&
		(string(h[12:16]) == "VP8 " || string(h[12:16]) == "VP8L" || string(h[12:16]) == "VP8X"):
		return FormatWebP, true
	case bytes.HasPrefix(h, []byte("%PDF-")):
		return FormatPDF, true
	case bytes.HasPrefix(h, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		if ebmlDocType(h) == "webm" {
			return FormatWebM, true
		}
	}
	return isoMediaFormat(h)
}

// ebmlDocType returns the DocType of the EBML header that h starts with
// ("webm", "matroska"), or "" if h does not hold a readable one.
func ebmlDocType(h []byte) string {
	id, n := ebmlVint(h, true)
	if n == 0 || id != 0x1A45DFA3 {
		return ""
	}
	h = h[n:]
	size, n := ebmlVint(h, false)
	if n == 0 {
		return ""
	}
	h = h[n:]
	if size < uint64(len(h)) {
		h = h[:size]
	}
	for len(h) > 0 {
		id, n := ebmlVint(h, true)
		if n == 0 {
			return ""
		}
		h = h[n:]
		size, n := ebmlVint(h, false)
		if n == 0 || size > uint64(len(h)-n) {
			return ""
		}
		h = h[n:]
		if id == 0x4282 {
			return string(h[:size])
		}
		h = h[size:]
	}
	return ""
}

// ebmlVint decodes an EBML variable-length integer: element ids keep
// their length marker bit, sizes drop it. n is 0 when b holds none.
func ebmlVint(b []byte, keepMarker bool) (v uint64, n int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	n = 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		n++
	}
	if n > 8 || len(b) < n {
		return 0, 0
	}
	v = uint64(b[0])
	if !keepMarker {
		v &= uint64(0xFF >> n)
	}
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}

// ISO base media brands. A brand names the specification a file follows
// (ISO/IEC 14496-12 4.3); image (HEIF, AVIF) and audio-only (M4A) brands
// are absent on purpose.
var (
	mp4Brands = []string{
		"isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9",
		"mp41", "mp42", "mp71", "avc1", "dash", "M4V ", "M4VH", "M4VP", "mmp4", "MSNV", "NDAS", "XAVC", "f4v ",
	}
	nonVideoBrands = []string{"heic", "heix", "hevc", "heim", "heis", "mif1", "msf1", "avif", "avis", "M4A ", "M4B ", "M4P ", "crx "}
)

// isoMediaFormat recognises MP4 and QuickTime files: by the ftyp box's
// brands, or, for QuickTime files older than ftyp, by a first atom that
// only QuickTime files start with.
func isoMediaFormat(h []byte) (Format, bool) {
	if len(h) < 16 {
		return Format{}, false
	}
	size := binary.BigEndian.Uint32(h)
	typ := string(h[4:8])
	if typ != "ftyp" {
		switch typ {
		case "moov", "mdat", "wide", "free", "skip", "pnot":
			if size >= 8 || size == 1 {
				return FormatMOV, true
			}
		}
		return Format{}, false
	}
	if size < 16 || size%4 != 0 {
		return Format{}, false
	}
	major := string(h[8:12])
	var compat []string
	for i := 16; i+4 <= int(min(size, uint32(len(h)))); i += 4 {
		compat = append(compat, string(h[i:i+4]))
	}
	switch {
	case major == "qt  ":
		return FormatMOV, true
	case slices.Contains(mp4Brands, major):
		return FormatMP4, true
	case slices.Contains(nonVideoBrands, major):
		return Format{}, false
	case slices.Contains(compat, "qt  "):
		return FormatMOV, true
	case slices.ContainsFunc(compat, func(b string) bool { return slices.Contains(mp4Brands, b) }):
		return FormatMP4, true
	}
	return Format{}, false
}
