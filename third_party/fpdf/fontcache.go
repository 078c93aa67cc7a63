package fpdf

import "sync"

// parsedUTF8 keeps what parsing a UTF-8 font file gives, by the file's
// bytes, for the next document that adds the same file. A program that
// writes many documents in the same few faces otherwise parses every face
// again for each document and names it by hashing its 65,536 widths
// as JSON, which costs more than laying out a page.
//
// A document gets its own copy of the parsed file: GenerateCutFont, the
// only later user, replaces the tables and maps it works on rather than
// changing them, and reads the bytes without writing them. The widths
// (fontDefType.Cw) are shared and only read.
var parsedUTF8 = struct {
	sync.Mutex
	byFile map[string]*parsedFont
	size   int // bytes of the files kept
}{byFile: map[string]*parsedFont{}}

// maxParsedUTF8 bounds the bytes of the files kept (each is kept as its
// key); a program that adds more than that parses the rest for each
// document, as before.
const maxParsedUTF8 = 64 << 20

type parsedFont struct {
	file *utf8FontFile     // as parseFile left it
	ids  map[string]string // generateFontID's result, by font key
}

// parseUTF8 returns the parsed font in utf8Bytes, a copy of its own
// reading utf8Bytes, and the id of the font definition def makes of it
// under fontkey.
func parseUTF8(fontkey string, utf8Bytes []byte, def func(*utf8FontFile) fontDefType) (*utf8FontFile, string, error) {
	parsedUTF8.Lock()
	defer parsedUTF8.Unlock()
	p, ok := parsedUTF8.byFile[string(utf8Bytes)]
	if !ok {
		f := newUTF8Font(&fileReader{readerPosition: 0, array: utf8Bytes})
		if err := f.parseFile(); err != nil {
			return nil, "", err
		}
		f.fileReader = nil // each copy reads its own caller's bytes
		p = &parsedFont{file: f, ids: map[string]string{}}
		if parsedUTF8.size+len(utf8Bytes) <= maxParsedUTF8 {
			// The key is a copy: the caller may reuse its slice.
			parsedUTF8.byFile[string(utf8Bytes)] = p
			parsedUTF8.size += len(utf8Bytes)
		}
	}
	file := *p.file
	file.fileReader = &fileReader{readerPosition: 0, array: utf8Bytes}
	id, ok := p.ids[fontkey]
	if !ok {
		id, _ = generateFontID(def(&file))
		p.ids[fontkey] = id
	}
	return &file, id, nil
}
