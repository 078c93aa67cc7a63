package extract

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// maxSharedStringBytes bounds the shared strings held in memory. Cells
// whose string lies beyond it show empty.
const maxSharedStringBytes = 32 << 20

// sharedStrings reads a workbook's shared string table lazily: a string
// is parsed when a cell first refers to it. Excel writes strings in the
// order cells first use them, so reading the first rows of a sheet reads
// little of a large table.
type sharedStrings struct {
	pkg   *ooxmlPackage
	part  string
	rc    io.ReadCloser
	d     *xml.Decoder
	strs  []string
	bytes int
	done  bool // the table is read to its end, or to a limit
}

func newSharedStrings(pkg *ooxmlPackage, part string) *sharedStrings {
	return &sharedStrings{pkg: pkg, part: part, done: part == ""}
}

// get returns string i, or "" if there is none.
func (s *sharedStrings) get(i int) (string, error) {
	if i < 0 {
		return "", nil
	}
	for i >= len(s.strs) && !s.done {
		if err := s.next(); err != nil {
			return "", err
		}
	}
	if i < len(s.strs) {
		return s.strs[i], nil
	}
	return "", nil
}

// next reads one more <si>.
func (s *sharedStrings) next() error {
	if s.d == nil {
		rc, err := s.pkg.open(s.part, maxPartBytes)
		if err != nil {
			s.done = true
			return err
		}
		s.rc, s.d = rc, xml.NewDecoder(rc)
	}
	var b strings.Builder
	inSI, inT, inRPh := false, false, 0
	for {
		tok, err := s.d.RawToken()
		switch {
		case err == io.EOF, errors.Is(err, errPartCapped):
			s.done = true
			return nil
		case err != nil:
			s.done = true
			return malformed("xlsx", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inSI = true
				b.Reset()
			case "t":
				inT = true
			case "rPh":
				inRPh++
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inT = false
			case "rPh":
				inRPh = max(inRPh-1, 0)
			case "si":
				if !inSI {
					continue
				}
				str := clip.Runes(b.String(), maxCellRune)
				s.bytes += len(str) + 16 // the string header counts too
				if s.bytes > maxSharedStringBytes {
					s.done = true
					return nil
				}
				s.strs = append(s.strs, str)
				return nil
			}
		case xml.CharData:
			if inSI && inT && inRPh == 0 && b.Len() < 4*maxCellRune {
				b.Write(t)
			}
		}
	}
}

func (s *sharedStrings) close() {
	if s.rc != nil {
		s.rc.Close()
	}
}
