package pdf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	lpdf "github.com/ledongthuc/pdf"
)

// taggedSample is a report with a title, headings, a list that runs over
// a page break, a table whose header row repeats on a second page, and a
// figure with a caption.
func taggedSample(t testing.TB) Document {
	var b strings.Builder
	b.WriteString("# Findings\n\nThe opening paragraph, with [a link](https://example.com/a) in it.\n\n## Items\n\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, "- item %d\n", i)
	}
	b.WriteString("\n## Stock\n\n| Code | Quantity |\n|---|---|\n")
	for i := 1; i <= 70; i++ {
		fmt.Fprintf(&b, "| WH-%03d | %d |\n", i, i*3)
	}
	b.WriteString("\n![Sales by month](obj1)\n")
	return Document{
		Title:    "Quarterly report",
		Markdown: b.String(),
		Elements: map[string]Image{"obj1": {PNG: chartPNG(t, 400, 250, 1)}},
		Lang:     "en-GB",
	}
}

// node is an element of the structure tree as read back from the file.
type node struct {
	typ   string
	alt   string
	kids  []*node
	mcrs  []mcr
	objrs []lpdf.Value // annotations
	attrs lpdf.Value   // the /A dictionary
}

type mcr struct{ page, mcid int }

// readTree reads the structure tree back with an independent PDF reader:
// the elements in order, and each page's parent tree entry as the
// elements it names.
func readTree(t *testing.T, data []byte) (root *node, parents map[int][]*node, catalog lpdf.Value, pageOf map[string]int) {
	t.Helper()
	rd, err := lpdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("reading pdf: %v", err)
	}
	pageOf = map[string]int{}
	for i := 1; i <= rd.NumPage(); i++ {
		pageOf[rd.Page(i).V.String()] = i
	}
	catalog = rd.Trailer().Key("Root")
	str := catalog.Key("StructTreeRoot")
	if str.Kind() != lpdf.Dict || str.Key("Type").Name() != "StructTreeRoot" {
		t.Fatalf("no StructTreeRoot in the catalog: %v", catalog)
	}
	byKey := map[string]*node{} // by the element's own printed form
	var walk func(v lpdf.Value) *node
	walk = func(v lpdf.Value) *node {
		n := &node{typ: v.Key("S").Name(), alt: v.Key("Alt").Text(), attrs: v.Key("A")}
		byKey[v.String()] = n
		pg := pageOf[v.Key("Pg").String()]
		k := v.Key("K")
		kids := []lpdf.Value{k}
		if k.Kind() == lpdf.Array {
			kids = nil
			for i := 0; i < k.Len(); i++ {
				kids = append(kids, k.Index(i))
			}
		}
		for _, kid := range kids {
			switch {
			case kid.Kind() == lpdf.Integer:
				if pg == 0 {
					t.Errorf("%s: MCID %d without a page", n.typ, kid.Int64())
				}
				n.mcrs = append(n.mcrs, mcr{pg, int(kid.Int64())})
			case kid.Kind() == lpdf.Dict && kid.Key("Type").Name() == "OBJR":
				n.objrs = append(n.objrs, kid.Key("Obj"))
			case kid.Kind() == lpdf.Dict && kid.Key("Type").Name() == "MCR":
				n.mcrs = append(n.mcrs, mcr{pageOf[kid.Key("Pg").String()], int(kid.Key("MCID").Int64())})
			case kid.Kind() == lpdf.Dict:
				n.kids = append(n.kids, walk(kid))
			}
		}
		return n
	}
	root = walk(str.Key("K"))
	parents = map[int][]*node{}
	nums := str.Key("ParentTree").Key("Nums")
	for i := 0; i+1 < nums.Len(); i += 2 {
		arr := nums.Index(i + 1)
		var row []*node
		for j := 0; j < arr.Len(); j++ {
			row = append(row, byKey[arr.Index(j).String()])
		}
		if arr.Kind() != lpdf.Array { // an annotation's entry
			row = []*node{byKey[arr.String()]}
		}
		parents[int(nums.Index(i).Int64())] = row
	}
	for i := 1; i <= rd.NumPage(); i++ {
		sp := rd.Page(i).V.Key("StructParents")
		if sp.Kind() != lpdf.Integer || int(sp.Int64()) != i-1 {
			t.Errorf("page %d: /StructParents %v, want %d", i, sp, i-1)
		}
		if rd.Page(i).V.Key("Tabs").Name() != "S" {
			t.Errorf("page %d: no /Tabs /S", i)
		}
	}
	return root, parents, catalog, pageOf
}

// outline lists the element types in reading order, each with its depth,
// collapsing runs of equal siblings: "L{LI{Lbl LBody{P}}×60}".
func outline(n *node) string {
	var b strings.Builder
	b.WriteString(n.typ)
	if len(n.kids) == 0 {
		return b.String()
	}
	b.WriteString("{")
	for i := 0; i < len(n.kids); {
		s := outline(n.kids[i])
		j := i + 1
		for j < len(n.kids) && outline(n.kids[j]) == s {
			j++
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(s)
		if j-i > 1 {
			b.WriteString("×" + strconv.Itoa(j-i))
		}
		i = j
	}
	b.WriteString("}")
	return b.String()
}

var mcidOp = regexp.MustCompile(`/(\w+) <</MCID (\d+)>> BDC`)

func TestStructureTree(t *testing.T) {
	res := renderOK(t, taggedSample(t))
	if res.Pages < 3 {
		t.Fatalf("%d pages; the sample needs a list and a table over page breaks", res.Pages)
	}
	root, parents, catalog, _ := readTree(t, res.PDF)

	want := "Document{H1×2 P{Link} H2 L{LI{Lbl LBody{P}}×60} H2 Table{TR{TH×2} TR{TD×2}×70} Figure{Caption}}"
	if got := outline(root); got != want {
		t.Errorf("structure\n got %s\nwant %s", got, want)
	}
	// The link's text and its annotation are in one Link element, which
	// the annotation's /StructParent names.
	link := root.kids[2].kids[0]
	if len(link.mcrs) != 1 || len(link.objrs) != 1 {
		t.Fatalf("the Link has %d MCIDs and %d annotations, want 1 and 1", len(link.mcrs), len(link.objrs))
	}
	annot := link.objrs[0]
	if annot.Key("Subtype").Name() != "Link" || annot.Key("A").Key("URI").Text() != "https://example.com/a" || annot.Key("Contents").Text() != "a link" {
		t.Errorf("the Link points to %v", annot)
	}
	if sp := annot.Key("StructParent"); sp.Kind() != lpdf.Integer || len(parents[int(sp.Int64())]) != 1 || parents[int(sp.Int64())][0] != link {
		t.Errorf("the annotation's /StructParent %v does not lead back to its Link", sp)
	}
	fig := root.kids[len(root.kids)-1]
	if fig.alt != "Sales by month" {
		t.Errorf("figure /Alt %q, want the caption", fig.alt)
	}
	if len(fig.mcrs) == 0 {
		t.Error("the figure marks no content")
	}
	bbox := fig.attrs.Key("BBox")
	if fig.attrs.Key("O").Name() != "Layout" || bbox.Len() != 4 ||
		!(0 < bbox.Index(0).Float64() && bbox.Index(0).Float64() < bbox.Index(2).Float64() && bbox.Index(2).Float64() < 595.28) ||
		!(0 < bbox.Index(1).Float64() && bbox.Index(1).Float64() < bbox.Index(3).Float64() && bbox.Index(3).Float64() < 841.89) {
		t.Errorf("figure attributes %v, want a /BBox on the page", fig.attrs)
	}

	if len(parents) != res.Pages+1 {
		t.Errorf("%d parent tree entries, want one a page and one for the link", len(parents))
	}
	// The list spans at least two pages, and so does the table.
	pagesOf := checkMarks(t, res.PDF, root, parents)
	if ps := pagesOf(root.kids[4]); len(ps) < 2 {
		t.Errorf("the list is on pages %v; the test needs it over a break", ps)
	}
	table := root.kids[6]
	if ps := pagesOf(table); len(ps) < 2 {
		t.Errorf("the table is on pages %v; the test needs it over a break", ps)
	}
	for _, th := range table.kids[0].kids {
		if th.attrs.Key("O").Name() != "Table" || th.attrs.Key("Scope").Name() != "Column" {
			t.Errorf("header cell attributes %v, want /Scope /Column", th.attrs)
		}
	}
	if ps := pagesOf(table.kids[0]); len(ps) != 1 {
		t.Errorf("the header row is in the tree on pages %v, want once", ps)
	}

	if v := catalog.Key("Lang").Text(); v != "en-GB" {
		t.Errorf("/Lang %q", v)
	}
	if !catalog.Key("MarkInfo").Key("Marked").Bool() {
		t.Error("no /MarkInfo <</Marked true>>")
	}
	if !catalog.Key("ViewerPreferences").Key("DisplayDocTitle").Bool() {
		t.Error("no /DisplayDocTitle")
	}
	if catalog.Key("Version").Name() != "1.7" || !bytes.HasPrefix(res.PDF, []byte("%PDF-1.7")) {
		t.Error("not PDF 1.7")
	}
	xmp, err := io.ReadAll(catalog.Key("Metadata").Reader())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Quarterly report", "<rdf:li>en-GB</rdf:li>", "<xmp:CreatorTool>Switchyard</xmp:CreatorTool>", "<xmp:CreateDate>2000-01-01T00:00:00Z</xmp:CreateDate>"} {
		if !bytes.Contains(xmp, []byte(s)) {
			t.Errorf("the XMP metadata lacks %s", s)
		}
	}
}

// The file passes qpdf's check and its own reading of the structure
// (qpdf is installed by scripts/fonts.sh --tests, which make test runs).
func TestStructureQPDF(t *testing.T) {
	qpdf, err := exec.LookPath("qpdf")
	if err != nil {
		t.Fatal("qpdf is not installed: run scripts/fonts.sh --tests (or apt-get install qpdf)")
	}
	res := renderOK(t, taggedSample(t))
	path := filepath.Join(t.TempDir(), "tagged.pdf")
	if err := os.WriteFile(path, res.PDF, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(qpdf, "--check", path).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("No syntax or stream encoding errors")) || bytes.Contains(out, []byte("WARNING")) {
		t.Fatalf("qpdf --check: %v\n%s", err, out)
	}
	out, err = exec.Command(qpdf, "--json=2", "--json-key=qpdf", path).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var doc struct {
		QPDF []json.RawMessage `json:"qpdf"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.QPDF) != 2 {
		t.Fatalf("qpdf --json: %v", err)
	}
	var objects map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(doc.QPDF[1], &objects); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objects {
		var d map[string]any
		if json.Unmarshal(o.Value, &d) != nil {
			continue
		}
		if d["/Type"] == "/StructElem" {
			s, _ := d["/S"].(string)
			kinds[s]++
		}
	}
	want := map[string]int{"/Document": 1, "/H1": 2, "/H2": 2, "/P": 61, "/Link": 1, "/L": 1, "/LI": 60, "/Lbl": 60, "/LBody": 60,
		"/Table": 1, "/TR": 71, "/TH": 2, "/TD": 140, "/Figure": 1, "/Caption": 1}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("qpdf reads the elements\n%v\nwant\n%v", kinds, want)
	}
}

// checkMarks checks the marked content of every page against the tree:
// sequences are never nested and all closed, each MCID is marked once
// with its element's type, every MCID of the tree is in the parent tree
// under its element, once, and every page's entry has exactly the MCIDs
// of the page. It returns the pages each element has content on.
func checkMarks(t *testing.T, data []byte, root *node, parents map[int][]*node) (pagesOf func(*node) map[int]bool) {
	t.Helper()
	rd, err := lpdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	pages := rd.NumPage()
	seen := map[mcr]bool{}
	perPage := map[int]int{}
	var check func(n *node)
	check = func(n *node) {
		for _, m := range n.mcrs {
			if seen[m] {
				t.Errorf("page %d MCID %d used twice", m.page, m.mcid)
			}
			seen[m] = true
			perPage[m.page]++
			row := parents[m.page-1]
			if m.mcid >= len(row) || row[m.mcid] != n {
				t.Errorf("page %d MCID %d: the parent tree does not name its %s", m.page, m.mcid, n.typ)
			}
		}
		for _, k := range n.kids {
			check(k)
		}
	}
	check(root)
	for p := 1; p <= pages; p++ {
		if len(parents[p-1]) != perPage[p] {
			t.Errorf("page %d: parent tree entry of %d, %d MCIDs in the tree", p, len(parents[p-1]), perPage[p])
		}
	}

	typeAt := map[mcr]string{}
	for p := 1; p <= pages; p++ {
		content, err := io.ReadAll(rd.Page(p).V.Key("Contents").Reader())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mcidOp.FindAllSubmatch(content, -1) {
			id, _ := strconv.Atoi(string(m[2]))
			k := mcr{p, id}
			if _, dup := typeAt[k]; dup {
				t.Errorf("page %d: MCID %d marked twice", p, id)
			}
			typeAt[k] = string(m[1])
		}
		depth := 0
		for _, ln := range bytes.Split(content, []byte("\n")) {
			switch {
			case bytes.HasSuffix(ln, []byte(" BDC")) || bytes.HasSuffix(ln, []byte(" BMC")):
				depth++
				if depth > 1 {
					t.Errorf("page %d: nested marked content at %q", p, ln)
				}
			case bytes.Equal(ln, []byte("EMC")):
				depth--
				if depth < 0 {
					t.Errorf("page %d: EMC without a sequence", p)
					depth = 0
				}
			}
		}
		if depth != 0 {
			t.Errorf("page %d ends inside a marked-content sequence", p)
		}
		if !bytes.Contains(content, []byte("/Artifact <</Type /Pagination /Subtype /Footer>> BDC")) {
			t.Errorf("page %d: the footer is not an artifact", p)
		}
	}
	if len(typeAt) != len(seen) {
		t.Errorf("%d MCIDs in the pages, %d in the tree", len(typeAt), len(seen))
	}
	pagesOf = func(n *node) map[int]bool {
		ps := map[int]bool{}
		var f func(n *node)
		f = func(n *node) {
			for _, m := range n.mcrs {
				ps[m.page] = true
				if typeAt[m] != n.typ {
					t.Errorf("page %d MCID %d is tagged %s in the content, %s in the tree", m.page, m.mcid, typeAt[m], n.typ)
				}
			}
			for _, k := range n.kids {
				f(k)
			}
		}
		f(n)
		return ps
	}
	pagesOf(root)
	return pagesOf
}

// Marks stay consistent in documents that break quotes, code, lists,
// tables, figures and links over pages, in both page sizes and scripts.
func TestMarksConsistent(t *testing.T) {
	var quote strings.Builder
	for i := range 90 {
		fmt.Fprintf(&quote, "> line %d of a quote with [a link %d](https://example.com/%d) that goes on\n>\n", i, i, i)
	}
	quote.WriteString("\n```\n" + strings.Repeat("code line\n", 120) + "```\n")
	docs := map[string]Document{
		"ten pages": tenPages(t),
		"quote":     {Title: "Quote", Markdown: quote.String()},
		"empty":     {},
	}
	for name, d := range sampleDocs(t) {
		docs[name] = d
	}
	for name, d := range docs {
		t.Run(name, func(t *testing.T) {
			res := renderOK(t, d)
			root, parents, _, _ := readTree(t, res.PDF)
			checkMarks(t, res.PDF, root, parents)
		})
	}
}

func TestGuessLang(t *testing.T) {
	for text, want := range map[string]string{
		"Quarterly report\n\nRevenue grew.":           "en",
		"Quartalsbericht: Umsätze stiegen.":           "en", // Latin says nothing more
		"四半期報告書\n\n売上は増加しました。":                        "ja",
		"季度报告\n\n收入增长。":                               "zh",
		"분기 보고서\n\n매출이 증가했습니다.":                       "ko",
		"דוח רבעוני\n\nההכנסות גדלו.":                 "he",
		"تقرير ربع سنوي":                              "ar",
		"รายงานรายไตรมาส":                             "th",
		"Τριμηνιαία έκθεση":                           "el",
		"त्रैमासिक रिपोर्ट":                           "hi",
		"A report in English with one word 日本語 in it": "en",
		"": "en",
	} {
		if got := guessLang(text); got != want {
			t.Errorf("guessLang(%q) = %s, want %s", text, got, want)
		}
	}
	if got := (Document{Lang: "de-CH", Markdown: "日本語"}).lang(); got != "de-CH" {
		t.Errorf("a given tag was replaced by %s", got)
	}
	if got := (Document{Lang: "not a tag!", Markdown: "日本語のテキスト"}).lang(); got != "ja" {
		t.Errorf("a malformed tag gave %s", got)
	}
}
