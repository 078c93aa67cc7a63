package extract

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
)

// Bounds of checkPDFStructure, which reads the structures the parser
// reads before any page (see the comment at the top of pdf.go).
const (
	// pdfMaxObjects caps object numbers: the PDF specification's own
	// implementation limit. maxPDFObjects lowers it for small files.
	pdfMaxObjects = 8_388_607
	// maxXrefSections bounds the chain of cross-reference sections that
	// incremental updates leave.
	maxXrefSections = 256
	// maxPredictorColumns bounds the row width of a PNG predictor,
	// which the parser allocates as given.
	maxPredictorColumns = 1 << 16
	// maxObjStmBytes bounds an object stream inflated: the parser reads
	// one from its start for every object it takes from it.
	// maxObjStmTotal bounds all of them together.
	maxObjStmBytes = 16 << 20
	maxObjStmTotal = 64 << 20
)

// maxPDFObjects is the highest object number a file of the given size
// may use: one object for every 16 bytes, plus slack, where real files
// take hundreds. The cross-reference sections together may list each
// object twice (a linearized file lists its first page's objects in
// both of its sections, an update lists again the objects it changes).
func maxPDFObjects(size int64) int64 { return min(pdfMaxObjects, size/16+4096) }

// xrefInfo is what the checks learn from cross-reference streams: for
// each object, the first entry read for it, sections being read newest
// first, as the parser does.
type xrefInfo struct {
	maxObj  int64
	entries int64   // listed by the sections read so far
	typ     []byte  // 0 free or not seen, 1 in the file, 2 in an object stream
	field   []int64 // 1: offset in the file; 2: the object stream's number
	seen    []bool
}

// checkPDFStructure checks the cross-reference chain and the object
// streams of the PDF of the given size that r holds.
func checkPDFStructure(ctx context.Context, r io.ReaderAt, size int64) error {
	x := &xrefInfo{maxObj: maxPDFObjects(size)}
	off, ok := findStartxref(r, size)
	if !ok {
		return nil // the parser refuses the file itself
	}
	seen := map[int64]bool{}
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case i == maxXrefSections:
			return overLimit("pdf", "more than %d cross-reference sections", maxXrefSections)
		case off <= 0 || off >= size:
			return malformed("pdf", fmt.Errorf("cross-reference offset %d outside the file", off))
		case seen[off]:
			return malformed("pdf", errors.New("the cross-reference sections form a loop"))
		}
		seen[off] = true
		lx := newPDFLexer(r, off, size)
		t, err := lx.next()
		if err != nil {
			return malformed("pdf", err)
		}
		var trailer map[string]any
		if t.v == pdfKeyword("xref") {
			trailer, err = x.checkXrefTable(lx)
		} else {
			lx.unread(t)
			trailer, err = x.checkXrefStream(ctx, r, size, lx)
		}
		if err != nil {
			return err
		}
		prev, ok := trailer["Prev"].(int64)
		if !ok {
			break
		}
		off = prev
	}
	return x.checkObjectStreams(ctx, r, size)
}

// findStartxref returns the offset the file's last startxref gives.
func findStartxref(r io.ReaderAt, size int64) (int64, bool) {
	n := min(size, 1024)
	tail := make([]byte, n)
	if _, err := r.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return 0, false
	}
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return 0, false
	}
	lx := newPDFLexer(bytes.NewReader(tail), int64(i+len("startxref")), n)
	t, err := lx.next()
	off, ok := t.v.(int64)
	return off, err == nil && ok
}

// count adds n entries to those the cross-reference sections list,
// refusing more than twice the objects the file may have: the parser
// reads every entry a section names, whatever data backs it.
func (x *xrefInfo) count(n int64) error {
	x.entries += n
	if x.entries > 2*x.maxObj {
		return overLimit("pdf", "the cross-reference sections list more than %d cross-reference entries", 2*x.maxObj)
	}
	return nil
}

func (x *xrefInfo) checkXrefTable(lx *pdfLexer) (map[string]any, error) {
	maxObj := x.maxObj
	bad := func(msg string) error { return malformed("pdf", errors.New(msg)) }
	for {
		t, err := lx.next()
		if err != nil {
			return nil, malformed("pdf", err)
		}
		if t.v == pdfKeyword("trailer") {
			break
		}
		start, ok1 := t.v.(int64)
		t, err = lx.next()
		count, ok2 := t.v.(int64)
		if err != nil || !ok1 || !ok2 || start < 0 || count < 0 {
			return nil, bad("bad cross-reference subsection")
		}
		if start+count > maxObj {
			return nil, overLimit("pdf", "the cross-reference table names object %d, over the limit of %d", start+count, maxObj)
		}
		if err := x.count(count); err != nil {
			return nil, err
		}
		for range 3 * count {
			if t, err := lx.next(); err != nil || t.kind != tokValue {
				return nil, bad("bad cross-reference entry")
			}
		}
	}
	v, err := lx.object(0)
	d, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, bad("bad trailer")
	}
	if n, ok := d["Size"].(int64); ok && (n < 0 || n > maxObj) {
		return nil, overLimit("pdf", "trailer Size %d is over the limit of %d", n, maxObj)
	}
	return d, nil
}

func (x *xrefInfo) checkXrefStream(ctx context.Context, r io.ReaderAt, size int64, lx *pdfLexer) (map[string]any, error) {
	bad := func(msg string) error { return malformed("pdf", errors.New(msg)) }
	if _, err := lx.objectHeader(); err != nil {
		return nil, bad("no cross-reference table or stream")
	}
	v, err := lx.object(0)
	d, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, bad("bad cross-reference stream")
	}
	if t, err := lx.next(); err != nil || t.v != pdfKeyword("stream") {
		return nil, bad("bad cross-reference stream")
	}
	n, ok := d["Size"].(int64)
	if !ok || n < 0 || n > x.maxObj {
		return nil, overLimit("pdf", "cross-reference stream Size %v is not within 0..%d", d["Size"], x.maxObj)
	}
	var w [3]int
	ws, ok := d["W"].([]any)
	if !ok || len(ws) != 3 {
		return nil, bad("bad cross-reference stream W")
	}
	total := 0
	for i, e := range ws {
		n, ok := e.(int64)
		if !ok || n < 0 || n > 8 {
			return nil, bad("bad cross-reference stream W")
		}
		if i < 3 {
			w[i] = int(n)
		}
		total += int(n)
	}
	if total == 0 {
		// Entries of no bytes would be read for ever without reaching
		// the end of the data.
		return nil, bad("cross-reference stream entries of zero bytes")
	}
	index := []any{int64(0), n}
	if idx, ok := d["Index"].([]any); ok {
		index = idx
	}
	for i := 0; i+1 < len(index); i += 2 {
		start, ok1 := index[i].(int64)
		count, ok2 := index[i+1].(int64)
		if !ok1 || !ok2 || start < 0 || count < 0 || start+count > x.maxObj {
			return nil, overLimit("pdf", "cross-reference stream Index is not within 0..%d", x.maxObj)
		}
		if err := x.count(count); err != nil {
			return nil, err
		}
	}
	if err := checkFilterParams(d); err != nil {
		return nil, err
	}
	data := streamData(r, size, lx.pos, d)
	if data == nil {
		return d, nil // a filter the parser does not read either
	}
	entry := make([]byte, total)
	for i := 0; i+1 < len(index); i += 2 {
		start, count := index[i].(int64), index[i+1].(int64)
		for obj := start; obj < start+count; obj++ {
			if obj%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			if _, err := io.ReadFull(data, entry); err != nil {
				return d, nil // the parser reports short data itself
			}
			typ := int64(1)
			if w[0] > 0 {
				typ = beInt(entry[:w[0]])
			}
			f2 := beInt(entry[w[0] : w[0]+w[1]])
			x.note(obj, typ, f2)
		}
	}
	return d, nil
}

// note records one cross-reference stream entry unless the object has
// one already.
func (x *xrefInfo) note(obj, typ, f2 int64) {
	for int64(len(x.seen)) <= obj {
		x.seen = append(x.seen, false)
		x.typ = append(x.typ, 0)
		x.field = append(x.field, 0)
	}
	if x.seen[obj] {
		return
	}
	x.seen[obj] = true
	if typ == 1 || typ == 2 {
		x.typ[obj], x.field[obj] = byte(typ), f2
	}
}

func beInt(b []byte) int64 {
	var n int64
	for _, c := range b {
		n = n<<8 | int64(c)
	}
	return n
}

// streamData returns the decoded data of the stream whose "stream"
// keyword ends at keywordEnd, for what checkPDFStructure reads: no
// filter or Flate, with or without the PNG Up predictor. Nil for others.
func streamData(r io.ReaderAt, size, keywordEnd int64, d map[string]any) io.Reader {
	start := keywordEnd
	var eol [2]byte
	r.ReadAt(eol[:], start)
	switch {
	case eol[0] == '\r' && eol[1] == '\n':
		start += 2
	case eol[0] == '\n' || eol[0] == '\r':
		start++
	}
	n := size - start
	if l, ok := d["Length"].(int64); ok && l >= 0 && l < n {
		n = l
	}
	var data io.Reader = io.NewSectionReader(r, start, n)
	switch d["Filter"] {
	case nil:
		return data
	case pdfName("FlateDecode"):
	default:
		return nil
	}
	zr, err := zlib.NewReader(data)
	if err != nil {
		return nil
	}
	params, _ := d["DecodeParms"].(map[string]any)
	switch params["Predictor"] {
	case nil, int64(1):
		return zr
	case int64(12):
		cols, _ := params["Columns"].(int64)
		return &pngUp{r: zr, row: make([]byte, 1+cols), prev: make([]byte, 1+cols)}
	}
	return nil
}

// pngUp undoes the PNG Up predictor, the one the parser supports.
type pngUp struct {
	r         io.Reader
	row, prev []byte
	pend      []byte
}

func (p *pngUp) Read(b []byte) (int, error) {
	for len(p.pend) == 0 {
		if _, err := io.ReadFull(p.r, p.row); err != nil {
			return 0, err
		}
		if p.row[0] != 2 {
			return 0, errPDFSyntax
		}
		for i := 1; i < len(p.row); i++ {
			p.prev[i] += p.row[i]
		}
		p.pend = p.prev[1:]
	}
	n := copy(b, p.pend)
	p.pend = p.pend[n:]
	return n, nil
}

// checkFilterParams bounds the predictor parameters of a stream
// dictionary read by checkPDFStructure.
func checkFilterParams(d map[string]any) error {
	var params []any
	switch p := d["DecodeParms"].(type) {
	case map[string]any:
		params = []any{p}
	case []any:
		params = p
	}
	for _, p := range params {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := p["Predictor"]; !ok {
			continue
		}
		c, ok := p["Columns"].(int64)
		if !ok || c < 1 || c > maxPredictorColumns {
			return overLimit("pdf", "predictor Columns %v not within 1..%d", p["Columns"], maxPredictorColumns)
		}
	}
	return nil
}

// checkObjectStreams checks every object stream that the cross-reference
// streams point into, and every stream those extend: that it is itself
// stored in the file (the parser would recurse without end on a stream
// stored in a stream), that its object count is a direct, bounded
// number, that its /Extends chain ends, and that it does not inflate
// beyond maxObjStmBytes or end inside a hex string.
func (x *xrefInfo) checkObjectStreams(ctx context.Context, r io.ReaderAt, size int64) error {
	var todo []int64
	for obj, t := range x.typ {
		if t == 2 {
			todo = append(todo, x.field[obj])
		}
	}
	extends := map[int64]int64{}
	done := map[int64]bool{}
	var inflated int64
	for len(todo) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if done[n] {
			continue
		}
		done[n] = true
		if n < 0 || n >= int64(len(x.typ)) || x.typ[n] == 0 {
			continue // a missing object: the parser fails on it, without looping
		}
		if x.typ[n] == 2 {
			return malformed("pdf", fmt.Errorf("object stream %d is stored in an object stream", n))
		}
		off := x.field[n]
		if off <= 0 || off >= size {
			continue
		}
		next, got, err := checkObjectStream(r, size, off, x.maxObj)
		if err != nil {
			return err
		}
		if inflated += got; inflated > maxObjStmTotal {
			return overLimit("pdf", "the object streams inflate beyond %d bytes in all", maxObjStmTotal)
		}
		if next >= 0 {
			extends[n] = next
			todo = append(todo, next)
		}
	}
	for start := range extends {
		n := start
		for range len(extends) {
			next, ok := extends[n]
			if !ok {
				break
			}
			if next == start {
				return malformed("pdf", errors.New("object streams extend each other in a loop"))
			}
			n = next
		}
	}
	return nil
}

// checkObjectStream checks the object stream at off and returns the
// object it extends, or -1, and its inflated size.
func checkObjectStream(r io.ReaderAt, size, off, maxObj int64) (extends, inflated int64, err error) {
	bad := func(msg string) error { return malformed("pdf", errors.New(msg)) }
	lx := newPDFLexer(r, off, size)
	if _, err := lx.objectHeader(); err != nil {
		return -1, inflated, nil // the parser fails on it
	}
	v, err := lx.object(0)
	d, ok := v.(map[string]any)
	if err != nil || !ok {
		return -1, inflated, nil
	}
	if t, err := lx.next(); err != nil || t.v != pdfKeyword("stream") {
		return -1, inflated, nil
	}
	n, ok := d["N"].(int64)
	if !ok {
		return -1, inflated, bad("an object stream's count is not a number")
	}
	if n < 0 || n > maxObj {
		return -1, inflated, overLimit("pdf", "an object stream of %d objects, over the limit of %d", n, maxObj)
	}
	if err := checkFilterParams(d); err != nil {
		return -1, inflated, err
	}
	// An encrypted stream does not inflate here; the parser decrypts it,
	// unchecked.
	if data := streamData(r, size, lx.pos, d); data != nil {
		var tail hexTail
		inflated, _ = io.Copy(&tail, io.LimitReader(data, maxObjStmBytes+1))
		if inflated > maxObjStmBytes {
			return -1, inflated, overLimit("pdf", "an object stream inflates beyond %d bytes", maxObjStmBytes)
		}
		if tail.open {
			return -1, inflated, errHexTail
		}
	}
	switch e := d["Extends"].(type) {
	case nil:
		return -1, inflated, nil
	case pdfRef:
		return e.num, inflated, nil
	}
	return -1, inflated, bad("an object stream's /Extends is not a reference")
}
