package pdf

import (
	"bytes"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
	lpdf "github.com/ledongthuc/pdf"
)

// plainPDF is what fpdf writes for n empty pages.
func plainPDF(t testing.TB, n int) []byte {
	t.Helper()
	f := fpdf.New("P", "pt", "A4", "")
	for range n {
		f.AddPage()
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadRawPDF(t *testing.T) {
	data := plainPDF(t, 3)
	p, err := readRawPDF(data)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := p.pages()
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 3 {
		t.Fatalf("%d pages, want 3", len(pages))
	}
	for _, n := range pages {
		d, err := p.dict(n)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(d, "/Type /Page\n") {
			t.Errorf("object %d is not a page: %s", n, d)
		}
	}
	cat, err := p.dict(p.root)
	if err != nil || !strings.Contains(cat, "/Type /Catalog") {
		t.Fatalf("root %d: %v %s", p.root, err, cat)
	}
	if p.updated || p.info == 0 || p.size <= p.root {
		t.Errorf("trailer read as %+v", p)
	}
	// A page content stream is not a plain dictionary.
	if _, err := p.dict(pages[0] + 1); err == nil {
		t.Error("a stream object was read as a dictionary")
	}
}

func TestReadRawPDFRejects(t *testing.T) {
	good := plainPDF(t, 1)
	xref := bytes.LastIndex(good, []byte("\nxref\n")) + 1
	cases := map[string][]byte{
		"empty":         nil,
		"no startxref":  good[:xref],
		"bad offset":    bytes.Replace(good, []byte("startxref\n"), []byte("startxref\n9"), 1),
		"not an xref":   append(bytes.Clone(good[:xref]), bytes.Replace(good[xref:], []byte("xref\n"), []byte("xrex\n"), 1)...),
		"encrypted":     bytes.Replace(good, []byte("trailer\n<<"), []byte("trailer\n<</Encrypt 9 0 R"), 1),
		"no root":       bytes.Replace(good, []byte("/Root"), []byte("/Rooz"), 1),
		"looping /Prev": bytes.Replace(good, []byte("trailer\n<<"), []byte("trailer\n<</Prev "+string(bytes.Fields(good[bytes.LastIndex(good, []byte("startxref"))+9:])[0])), 1),
	}
	for name, data := range cases {
		if _, err := readRawPDF(data); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
	// An object that is not where the xref says.
	p, err := readRawPDF(good)
	if err != nil {
		t.Fatal(err)
	}
	p.offsets[p.root] = 0
	if _, err := p.dict(p.root); err == nil {
		t.Error("a misplaced object was read")
	}
	if _, err := p.dict(p.size + 5); err == nil {
		t.Error("an object missing from the xref was read")
	}
}

func TestAddStructureOnce(t *testing.T) {
	tg := newTagger()
	tg.open("P")
	out, err := addStructure(plainPDF(t, 2), tg)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := lpdf.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatalf("the updated file does not read: %v", err)
	}
	if rd.NumPage() != 2 || rd.Page(2).V.Key("StructParents").Int64() != 1 {
		t.Errorf("pages not updated: %d pages, %v", rd.NumPage(), rd.Page(2).V)
	}
	if s := rd.Trailer().Key("Root").Key("StructTreeRoot").Key("K").Key("K").Index(0).Key("S").Name(); s != "P" {
		t.Errorf("first element %q, want P", s)
	}
	if id := rd.Trailer().Key("ID"); id.Len() != 2 || len(id.Index(0).RawString()) != 16 {
		t.Errorf("trailer /ID %v, want two 16-byte strings", id)
	}
	if _, err := addStructure(out, tg); err == nil {
		t.Error("a file was tagged twice")
	}
	// Content on more pages than the file has is an internal error, not
	// a broken file.
	tg.pages = make([][]*structElem, 3)
	if _, err := addStructure(plainPDF(t, 2), tg); err == nil {
		t.Error("marked content beyond the last page was accepted")
	}
	tg.pages = nil
	tg.annotation(3, nil)
	if _, err := addStructure(plainPDF(t, 2), tg); err == nil {
		t.Error("a link beyond the last page was accepted")
	}
	// fpdf lists no annotation where one was recorded.
	tg.annots = nil
	tg.annotation(1, nil)
	if _, err := addStructure(plainPDF(t, 2), tg); err == nil {
		t.Error("a recorded link missing from the page was accepted")
	}
}

func TestExtend(t *testing.T) {
	got, err := extend("<</Type /Page\n/Parent 1 0 R\n>>", []string{"/Tabs"}, "\n/Tabs /S")
	if err != nil || got != "<</Type /Page\n/Parent 1 0 R\n\n/Tabs /S\n>>" {
		t.Errorf("extend: %q %v", got, err)
	}
	if _, err := extend("<</Type /Page /Tabs /R>>", []string{"/Tabs"}, " /Tabs /S"); err == nil {
		t.Error("a key was added twice")
	}
}

func TestPDFText(t *testing.T) {
	if got := pdfText("a)é😀"); got != "<FEFF0061002900E9D83DDE00>" {
		t.Errorf("pdfText = %s", got)
	}
}

func FuzzReadRawPDF(f *testing.F) {
	f.Add(plainPDF(f, 1))
	f.Add([]byte("startxref\n0\n"))
	f.Add([]byte("xref\n0 2\n0000000000 65535 f \n0000000099 00000 n \ntrailer\n<</Size 2 /Root 1 0 R>>\nstartxref\n0\n%%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := readRawPDF(data)
		if err != nil {
			return
		}
		_, _ = p.pages()
		_, _ = addStructure(data, newTagger())
	})
}

func TestAnnots(t *testing.T) {
	d := "<</Type /Page\n/Annots [<</Type /Annot /Subtype /Link /A <</S /URI /URI (https://x.example/\\)>>(a\\)))>>>> <</Type /Annot /A <</URI ((b) c)>>>>]\n/Parent 1 0 R>>"
	start, end, dicts, err := annots(d)
	if err != nil {
		t.Fatal(err)
	}
	if d[start:end] != d[strings.Index(d, "["):strings.Index(d, "]\n")+1] {
		t.Errorf("array %q", d[start:end])
	}
	want := []string{"<</Type /Annot /Subtype /Link /A <</S /URI /URI (https://x.example/\\)>>(a\\)))>>>>", "<</Type /Annot /A <</URI ((b) c)>>>>"}
	if len(dicts) != 2 || dicts[0] != want[0] || dicts[1] != want[1] {
		t.Errorf("dictionaries %q", dicts)
	}
	if _, _, dicts, err := annots("<</Type /Page>>"); err != nil || dicts != nil {
		t.Errorf("a page without links: %v %v", dicts, err)
	}
	for _, bad := range []string{"<</Annots 5 0 R>>", "<</Annots [5 0 R]>>", "<</Annots [<</A (x>>", "<</Annots [>>]>>"} {
		if _, _, _, err := annots(bad); err == nil {
			t.Errorf("%q read without error", bad)
		}
	}
}
