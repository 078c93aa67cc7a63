package extract

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/switchyardhq/switchyard/files/internal/zipdir"
)

// Bounds on the zip packages of docx and xlsx files. A hostile archive
// can claim anything in its directory and inflate a thousandfold, so the
// sizes it declares are checked before a part is opened and every part
// is read through a limit whatever it declares.
const (
	// maxMetaPartBytes bounds the small parts read whole: content
	// types, relationships, the workbook, styles.
	maxMetaPartBytes = 4 << 20
	// maxPartBytes bounds how much of one content part (the document
	// body, a worksheet, the shared strings) is inflated and parsed.
	// Reaching it ends the text there, as truncated.
	maxPartBytes = 64 << 20
	// maxInflatedBytes bounds the bytes inflated from one package, all
	// parts together. Reaching it ends the text there, as truncated.
	maxInflatedBytes = 128 << 20
	// A part that declares more than maxRatio times its compressed size,
	// and more than ratioFloor bytes, is a zip bomb: deflate reaches
	// about 1000:1 on repeated bytes, while Office XML stays well under
	// 100:1.
	maxRatio   = 200
	ratioFloor = 1 << 20
)

// Main part content types of the two formats.
const (
	docxMainType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
	xlsxMainType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
)

// errPartCapped is returned by a part's reader at its read limit.
var errPartCapped = errors.New("extract: part read limit reached")

// ooxmlPackage is an opened Office Open XML zip package.
type ooxmlPackage struct {
	format   string               // "docx" or "xlsx", for errors
	parts    map[string]*zip.File // by lower-case name without a leading slash
	inflated int64                // bytes inflated so far, all parts
}

func openPackage(format string, r io.ReaderAt, size int64) (*ooxmlPackage, error) {
	if err := zipdir.Check(r, size); err != nil {
		if errors.Is(err, zipdir.ErrLimit) {
			return nil, overLimit(format, "%v", err)
		}
		return nil, malformed(format, err)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, malformed(format, err)
	}
	p := &ooxmlPackage{format: format, parts: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		p.parts[partKey(f.Name)] = f
	}
	return p, nil
}

func partKey(name string) string {
	return strings.ToLower(strings.TrimPrefix(strings.ReplaceAll(name, `\`, "/"), "/"))
}

// part returns the named part, or nil.
func (p *ooxmlPackage) part(name string) *zip.File { return p.parts[partKey(name)] }

// open opens the named part for reading at most limit bytes; past them
// the reader fails with errPartCapped. Parts that look like zip bombs are
// refused with ErrLimit.
func (p *ooxmlPackage) open(name string, limit int64) (io.ReadCloser, error) {
	f := p.part(name)
	if f == nil {
		return nil, malformed(p.format, fmt.Errorf("part %s is missing", name))
	}
	if u := f.UncompressedSize64; u > ratioFloor && u/maxRatio > f.CompressedSize64 {
		return nil, overLimit(p.format, "part %s would inflate %d bytes from %d (a zip bomb)", name, u, f.CompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, malformed(p.format, fmt.Errorf("part %s: %w", name, err))
	}
	return &partReader{rc: rc, pkg: p, left: limit}, nil
}

// partReader reads a part up to its own limit and the package's.
type partReader struct {
	rc   io.ReadCloser
	pkg  *ooxmlPackage
	left int64
}

func (r *partReader) Read(b []byte) (int, error) {
	left := min(r.left, maxInflatedBytes-r.pkg.inflated)
	if left <= 0 {
		return 0, errPartCapped
	}
	if int64(len(b)) > left {
		b = b[:left]
	}
	n, err := r.rc.Read(b)
	r.left -= int64(n)
	r.pkg.inflated += int64(n)
	return n, err
}

func (r *partReader) Close() error { return r.rc.Close() }

// readMeta reads a small part whole and decodes it into v. Over
// maxMetaPartBytes is ErrLimit.
func (p *ooxmlPackage) readMeta(name string, v any) error {
	rc, err := p.open(name, maxMetaPartBytes)
	if err != nil {
		return err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if errors.Is(err, errPartCapped) {
		return overLimit(p.format, "part %s is over %d bytes", name, maxMetaPartBytes)
	}
	if err != nil {
		return malformed(p.format, fmt.Errorf("part %s: %w", name, err))
	}
	if err := xml.Unmarshal(b, v); err != nil {
		return malformed(p.format, fmt.Errorf("part %s: %w", name, err))
	}
	return nil
}

// mainPart finds the package's main part of the given content type in
// [Content_Types].xml, as the upload check did.
func (p *ooxmlPackage) mainPart(contentType string) (string, error) {
	var types struct {
		Overrides []struct {
			PartName    string `xml:"PartName,attr"`
			ContentType string `xml:"ContentType,attr"`
		} `xml:"Override"`
	}
	if err := p.readMeta("[Content_Types].xml", &types); err != nil {
		return "", err
	}
	for _, o := range types.Overrides {
		if o.ContentType == contentType && p.part(o.PartName) != nil {
			return partKey(o.PartName), nil
		}
	}
	return "", malformed(p.format, errors.New("no main part"))
}

// relationship is an entry of a part's relationships.
type relationship struct {
	ID     string `xml:"Id,attr"`
	Type   string `xml:"Type,attr"`
	Target string `xml:"Target,attr"`
	Mode   string `xml:"TargetMode,attr"`
}

// relationships returns the relationships of the part source by id,
// their targets resolved to part names. A part without any has none.
func (p *ooxmlPackage) relationships(source string) (map[string]relationship, error) {
	dir, file := path.Split(source)
	name := dir + "_rels/" + file + ".rels"
	if p.part(name) == nil {
		return nil, nil
	}
	var rels struct {
		Rels []relationship `xml:"Relationship"`
	}
	if err := p.readMeta(name, &rels); err != nil {
		return nil, err
	}
	out := make(map[string]relationship, len(rels.Rels))
	for _, r := range rels.Rels {
		if strings.EqualFold(r.Mode, "External") {
			continue
		}
		if strings.HasPrefix(r.Target, "/") {
			r.Target = partKey(r.Target)
		} else {
			r.Target = partKey(path.Join(dir, r.Target))
		}
		out[r.ID] = r
	}
	return out, nil
}

// relType reports whether a relationship type URI names kind, in both the
// transitional and the strict namespace.
func relType(uri, kind string) bool { return strings.HasSuffix(uri, "/"+kind) }
