package pdf

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The structure tree goes into the file as an incremental update (ISO
// 32000-1, 7.5.6) appended to what fpdf wrote: fpdf has no notion of
// tags, and rewriting its output would mean parsing all of it. An update
// only needs the few objects it replaces (the catalog and the pages),
// which fpdf writes as plain dictionaries listed in a classic xref table.

// rawPDF reads just enough of a PDF written by fpdf: classic xref tables
// (the last and those its /Prev chain names), the last trailer and
// uncompressed objects by number.
type rawPDF struct {
	data    []byte
	xref    int         // offset of the last xref section
	updated bool        // the file has had an incremental update
	offsets map[int]int // object number → offset
	size    int         // trailer /Size
	root    int         // trailer /Root
	info    int         // trailer /Info, 0 if none
}

var (
	reRef   = regexp.MustCompile(`(\d+) 0 R`)
	reSize  = regexp.MustCompile(`/Size (\d+)`)
	reRoot  = regexp.MustCompile(`/Root (\d+) 0 R`)
	reInfo  = regexp.MustCompile(`/Info (\d+) 0 R`)
	rePages = regexp.MustCompile(`/Pages (\d+) 0 R`)
	reKids  = regexp.MustCompile(`/Kids\s*\[([^\]]*)\]`)
)

func readRawPDF(data []byte) (*rawPDF, error) {
	i := bytes.LastIndex(data, []byte("startxref"))
	if i < 0 {
		return nil, errors.New("no startxref")
	}
	f := bytes.Fields(data[i+len("startxref"):])
	if len(f) == 0 {
		return nil, errors.New("no xref offset")
	}
	xref, err := strconv.Atoi(string(f[0]))
	if err != nil || xref < 0 || xref >= len(data) {
		return nil, fmt.Errorf("bad xref offset %q", f[0])
	}
	p := &rawPDF{data: data, xref: xref, offsets: map[int]int{}}
	trailer, prev, err := p.section(xref)
	if err != nil {
		return nil, err
	}
	if strings.Contains(trailer, "/Encrypt") {
		return nil, errors.New("encrypted file")
	}
	seen := map[int]bool{xref: true}
	for prev >= 0 {
		p.updated = true
		if seen[prev] {
			return nil, errors.New("xref sections loop")
		}
		seen[prev] = true
		if _, prev, err = p.section(prev); err != nil {
			return nil, err
		}
	}
	m := reSize.FindStringSubmatch(trailer)
	r := reRoot.FindStringSubmatch(trailer)
	if m == nil || r == nil {
		return nil, errors.New("trailer without /Size or /Root")
	}
	p.size, _ = strconv.Atoi(m[1])
	p.root, _ = strconv.Atoi(r[1])
	if in := reInfo.FindStringSubmatch(trailer); in != nil {
		p.info, _ = strconv.Atoi(in[1])
	}
	return p, nil
}

var rePrev = regexp.MustCompile(`/Prev (\d+)`)

// section reads the xref section at offset xref, adding the objects it
// lists unless a later section listed them, and returns its trailer and
// the offset of the previous section (-1 for none).
func (p *rawPDF) section(xref int) (trailer string, prev int, err error) {
	data := p.data
	if xref < 0 || xref >= len(data) {
		return "", -1, fmt.Errorf("bad xref offset %d", xref)
	}
	rest := data[xref:]
	if !bytes.HasPrefix(rest, []byte("xref")) {
		return "", -1, errors.New("no classic xref table at startxref")
	}
	tr := bytes.Index(rest, []byte("trailer"))
	if tr < 0 {
		return "", -1, errors.New("no trailer")
	}
	lines := strings.Split(strings.ReplaceAll(string(rest[len("xref"):tr]), "\r", ""), "\n")
	num, count := 0, 0
	for _, ln := range lines {
		fs := strings.Fields(ln)
		switch {
		case len(fs) == 0:
		case len(fs) == 2 && count == 0:
			num, _ = strconv.Atoi(fs[0])
			count, _ = strconv.Atoi(fs[1])
		case len(fs) == 3 && count > 0:
			if fs[2] == "n" {
				off, err := strconv.Atoi(fs[0])
				if err != nil || off >= len(data) {
					return "", -1, fmt.Errorf("bad xref entry %q", ln)
				}
				if _, later := p.offsets[num]; !later {
					p.offsets[num] = off
				}
			}
			num++
			count--
		default:
			return "", -1, fmt.Errorf("bad xref line %q", ln)
		}
	}
	trailer = string(rest[tr:])
	if end := strings.Index(trailer, "startxref"); end >= 0 {
		trailer = trailer[:end]
	}
	prev = -1
	if m := rePrev.FindStringSubmatch(trailer); m != nil {
		prev, _ = strconv.Atoi(m[1])
	}
	return trailer, prev, nil
}

// dict returns object n, which must be a dictionary without a stream, as
// its source text "<<…>>".
func (p *rawPDF) dict(n int) (string, error) {
	off, ok := p.offsets[n]
	if !ok {
		return "", fmt.Errorf("object %d not in the xref", n)
	}
	head := strconv.Itoa(n) + " 0 obj"
	rest := p.data[off:]
	if !bytes.HasPrefix(rest, []byte(head)) {
		return "", fmt.Errorf("object %d not at its offset", n)
	}
	end := bytes.Index(rest, []byte("endobj"))
	if end < 0 {
		return "", fmt.Errorf("object %d has no end", n)
	}
	body := strings.TrimSpace(string(rest[len(head):end]))
	if !strings.HasPrefix(body, "<<") || !strings.HasSuffix(body, ">>") || strings.Contains(body, "stream") {
		return "", fmt.Errorf("object %d is not a plain dictionary", n)
	}
	return body, nil
}

// pages returns the object numbers of the pages in order. fpdf writes one
// flat /Pages node.
func (p *rawPDF) pages() ([]int, error) {
	cat, err := p.dict(p.root)
	if err != nil {
		return nil, err
	}
	m := rePages.FindStringSubmatch(cat)
	if m == nil {
		return nil, errors.New("catalog without /Pages")
	}
	n, _ := strconv.Atoi(m[1])
	node, err := p.dict(n)
	if err != nil {
		return nil, err
	}
	k := reKids.FindStringSubmatch(node)
	if k == nil {
		return nil, errors.New("pages node without /Kids")
	}
	var out []int
	for _, ref := range reRef.FindAllStringSubmatch(k[1], -1) {
		v, _ := strconv.Atoi(ref[1])
		out = append(out, v)
	}
	return out, nil
}

// extend adds entries to a dictionary's source text; the keys must not be
// there already.
func extend(dict string, keys []string, entries string) (string, error) {
	for _, k := range keys {
		if strings.Contains(dict, k+" ") || strings.Contains(dict, k+"<<") || strings.Contains(dict, k+"\n") {
			return "", fmt.Errorf("dictionary already has %s", k)
		}
	}
	return strings.TrimSuffix(dict, ">>") + entries + "\n>>", nil
}

// addStructure appends t's structure tree to pdf as an incremental update
// and marks the file as tagged PDF 1.7.
func addStructure(pdf []byte, t *tagger) ([]byte, error) {
	p, err := readRawPDF(pdf)
	if err != nil {
		return nil, err
	}
	if p.updated {
		return nil, errors.New("the file has been updated already")
	}
	pageObjs, err := p.pages()
	if err != nil {
		return nil, err
	}
	if len(t.pages) > len(pageObjs) || len(t.annots) > len(pageObjs) {
		return nil, fmt.Errorf("marked content or links on %d pages of %d", max(len(t.pages), len(t.annots)), len(pageObjs))
	}

	// Number the new objects: the tree root, then the elements in
	// reading order.
	next := p.size
	rootNum := next
	next++
	nums := map[*structElem]int{}
	var order []*structElem
	var walk func(e *structElem)
	walk = func(e *structElem) {
		nums[e] = next
		order = append(order, e)
		next++
		for _, k := range e.kids {
			if k.elem != nil {
				walk(k.elem)
			}
		}
	}
	walk(t.root)

	// Link annotations become objects of their own, which a Link
	// element can point to; fpdf writes them inside the page.
	pageDicts := make([]string, len(pageObjs))
	annotNums := make([][]int, len(pageObjs))
	annotDicts := make([][]string, len(pageObjs))
	for i, n := range pageObjs {
		d, err := p.dict(n)
		if err != nil {
			return nil, err
		}
		var owners []*structElem
		if i < len(t.annots) {
			owners = t.annots[i]
		}
		start, end, dicts, err := annots(d)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		if len(dicts) != len(owners) {
			return nil, fmt.Errorf("page %d has %d annotations, %d recorded", i+1, len(dicts), len(owners))
		}
		if len(dicts) > 0 {
			var refs strings.Builder
			refs.WriteString("[")
			for range dicts {
				annotNums[i] = append(annotNums[i], next)
				fmt.Fprintf(&refs, "%d 0 R ", next)
				next++
			}
			refs.WriteString("]")
			d = d[:start] + refs.String() + d[end:]
		}
		annotDicts[i] = dicts
		pageDicts[i] = d
	}

	out := bytes.NewBuffer(make([]byte, 0, len(pdf)+64*len(order)+4096))
	out.Write(pdf)
	if !bytes.HasSuffix(pdf, []byte("\n")) {
		out.WriteByte('\n')
	}
	offsets := map[int]int{}
	obj := func(n int, body string) {
		offsets[n] = out.Len()
		fmt.Fprintf(out, "%d 0 obj\n%s\nendobj\n", n, body)
	}

	cat, err := p.dict(p.root)
	if err != nil {
		return nil, err
	}
	cat, err = extend(cat, []string{"/StructTreeRoot", "/MarkInfo", "/ViewerPreferences", "/Version"},
		fmt.Sprintf("\n/StructTreeRoot %d 0 R\n/MarkInfo <</Marked true>>\n/ViewerPreferences <</DisplayDocTitle true>>\n/Version /1.7", rootNum))
	if err != nil {
		return nil, err
	}
	obj(p.root, cat)
	for i, n := range pageObjs {
		d, err := extend(pageDicts[i], []string{"/StructParents", "/Tabs"}, fmt.Sprintf("\n/StructParents %d\n/Tabs /S", i))
		if err != nil {
			return nil, err
		}
		obj(n, d)
	}

	var b strings.Builder
	b.WriteString("<</Type /StructTreeRoot /K ")
	fmt.Fprintf(&b, "%d 0 R", nums[t.root])
	b.WriteString(" /ParentTree <</Nums [")
	for i := range pageObjs {
		fmt.Fprintf(&b, " %d [", i)
		if i < len(t.pages) {
			for _, e := range t.pages[i] {
				fmt.Fprintf(&b, "%d 0 R ", nums[e])
			}
		}
		b.WriteString("]")
	}
	// Annotations follow the pages in the parent tree, each keyed by
	// its /StructParent.
	key := len(pageObjs)
	annotKeys := make([][]int, len(pageObjs))
	annotText := make([][]string, len(pageObjs))
	for i, owners := range t.annots {
		for _, e := range owners {
			k, text := -1, ""
			if e != nil {
				text = strings.TrimSpace(e.text)
				k = key
				fmt.Fprintf(&b, " %d %d 0 R", key, nums[e])
				key++
			}
			annotKeys[i] = append(annotKeys[i], k)
			annotText[i] = append(annotText[i], text)
		}
	}
	fmt.Fprintf(&b, "]>> /ParentTreeNextKey %d>>", key)
	obj(rootNum, b.String())

	for _, e := range order {
		b.Reset()
		fmt.Fprintf(&b, "<</Type /StructElem /S /%s /P ", e.typ)
		if e.parent == nil {
			fmt.Fprintf(&b, "%d 0 R", rootNum)
		} else {
			fmt.Fprintf(&b, "%d 0 R", nums[e.parent])
		}
		if e.alt != "" {
			b.WriteString(" /Alt " + pdfText(e.alt))
		}
		if e.attrs != "" {
			b.WriteString(" /A " + e.attrs)
		}
		// /Pg names the page of the element's first marked content; a
		// kid on another page says its own.
		pg := 0
		for _, k := range e.kids {
			if k.elem == nil {
				pg = k.page
				break
			}
		}
		if pg > 0 {
			fmt.Fprintf(&b, " /Pg %d 0 R", pageObjs[pg-1])
		}
		b.WriteString(" /K [")
		for _, k := range e.kids {
			switch {
			case k.annot > 0:
				fmt.Fprintf(&b, "<</Type /OBJR /Pg %d 0 R /Obj %d 0 R>> ", pageObjs[k.page-1], annotNums[k.page-1][k.annot-1])
			case k.elem != nil:
				fmt.Fprintf(&b, "%d 0 R ", nums[k.elem])
			case k.page == pg:
				fmt.Fprintf(&b, "%d ", k.mcid)
			default:
				fmt.Fprintf(&b, "<</Type /MCR /Pg %d 0 R /MCID %d>> ", pageObjs[k.page-1], k.mcid)
			}
		}
		b.WriteString("]>>")
		obj(nums[e], b.String())
	}

	for i, dicts := range annotDicts {
		for j, d := range dicts {
			extra := fmt.Sprintf(" /P %d 0 R", pageObjs[i])
			if k := annotKeys[i][j]; k >= 0 {
				extra += fmt.Sprintf(" /StructParent %d", k)
			}
			// What a reader says for the annotation itself: its text.
			if s := annotText[i][j]; s != "" {
				extra += " /Contents " + pdfText(s)
			}
			d, err := extend(d, []string{"/StructParent", "/Contents"}, extra)
			if err != nil {
				return nil, err
			}
			obj(annotNums[i][j], d)
		}
	}

	// The xref section: one subsection per replaced object, one for the
	// new ones.
	xref := out.Len()
	out.WriteString("xref\n")
	for _, n := range append([]int{p.root}, pageObjs...) {
		fmt.Fprintf(out, "%d 1\n%010d 00000 n \n", n, offsets[n])
	}
	fmt.Fprintf(out, "%d %d\n", p.size, next-p.size)
	for n := p.size; n < next; n++ {
		fmt.Fprintf(out, "%010d 00000 n \n", offsets[n])
	}
	fmt.Fprintf(out, "trailer\n<<\n/Size %d\n/Root %d 0 R\n", next, p.root)
	if p.info > 0 {
		fmt.Fprintf(out, "/Info %d 0 R\n", p.info)
	}
	// fpdf writes no file identifier, which PDF/A and some tools want; a
	// digest of the original keeps the same Document the same bytes.
	id := md5.Sum(pdf)
	fmt.Fprintf(out, "/ID [<%x> <%x>]\n", id, id)
	fmt.Fprintf(out, "/Prev %d\n>>\nstartxref\n%d\n%%%%EOF\n", p.xref, xref)

	res := out.Bytes()
	// The header names the version too; both are eight bytes, so no
	// offset moves.
	if bytes.HasPrefix(res, []byte("%PDF-1.")) && len(res) > 8 && res[7] >= '0' && res[7] < '7' {
		res[7] = '7'
	}
	return res, nil
}

// annots finds a page's inline /Annots array: the span of the array in
// d and the source of each annotation dictionary in it. An array of
// references (not fpdf's) is an error.
func annots(d string) (start, end int, dicts []string, err error) {
	i := strings.Index(d, "/Annots")
	if i < 0 {
		return 0, 0, nil, nil
	}
	i += len("/Annots")
	for i < len(d) && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	if i >= len(d) || d[i] != '[' {
		return 0, 0, nil, errors.New("/Annots is not an array")
	}
	start = i
	depth, from := 0, -1
	for i = start + 1; i < len(d); i++ {
		switch c := d[i]; {
		case c == '(':
			// A literal string: balanced parentheses, backslash escapes.
			nest := 0
			for ; i < len(d); i++ {
				if d[i] == '\\' {
					i++
				} else if d[i] == '(' {
					nest++
				} else if d[i] == ')' {
					nest--
					if nest == 0 {
						break
					}
				}
			}
		case c == '<' && i+1 < len(d) && d[i+1] == '<':
			if depth == 0 {
				from = i
			}
			depth++
			i++
		case c == '>' && i+1 < len(d) && d[i+1] == '>':
			depth--
			i++
			if depth == 0 {
				dicts = append(dicts, d[from:i+1])
			}
			if depth < 0 {
				return 0, 0, nil, errors.New("unbalanced /Annots")
			}
		case c == ']' && depth == 0:
			return start, i + 1, dicts, nil
		case depth == 0 && c != ' ' && c != '\n' && c != '\r':
			return 0, 0, nil, errors.New("/Annots holds more than dictionaries")
		}
	}
	return 0, 0, nil, errors.New("unterminated /Annots")
}

// pdfText encodes s as a PDF text string: UTF-16BE with its byte order
// mark, in hex, so no character needs escaping.
func pdfText(s string) string {
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}
