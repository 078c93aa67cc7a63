package pdf

import "strconv"

// structElem is one element of the document's logical structure: what a
// screen reader walks instead of the page's drawing order.
type structElem struct {
	typ    string // standard structure type: P, H1, L, LI, Table, Figure…
	alt    string // a Figure's replacement text
	attrs  string // the /A attribute dictionary, "" for none
	text   string // a Link's text, which its annotations repeat as /Contents
	parent *structElem
	kids   []structKid
}

// structKid is a child of an element: another element, a marked-content
// sequence (by page, 1-based, and its MCID on that page), or with annot
// set, the annot-th link annotation of the page (1-based).
type structKid struct {
	elem       *structElem
	page, mcid int
	annot      int
}

// tagger keeps the structure tree while the pages are drawn.
type tagger struct {
	root *structElem
	cur  *structElem // the element content drawn now belongs to
	// pages[p-1][mcid] is the element owning that MCID of page p: the
	// page's entry in the parent tree.
	pages [][]*structElem
	// annots[p-1] are the owners of page p's link annotations, in the
	// order fpdf lists them; nil for one drawn as an artifact.
	annots [][]*structElem
	inMark bool // something is being drawn inside a marked-content sequence
	// held is the element whose sequence is left open between drawing
	// calls on page heldPage, so that the lines of a block share one
	// MCID per page; anything else drawn closes it first (flush).
	held     *structElem
	heldPage int
}

// taggable reports whether content drawn now gets its own MCID.
func (t *tagger) taggable() bool {
	return !t.inMark && t.cur != nil && t.cur != t.root
}

// annotation records the next link annotation of page, made for owner
// (a Link element, or nil).
func (t *tagger) annotation(page int, owner *structElem) {
	for len(t.annots) < page {
		t.annots = append(t.annots, nil)
	}
	t.annots[page-1] = append(t.annots[page-1], owner)
	if owner != nil {
		owner.kids = append(owner.kids, structKid{page: page, annot: len(t.annots[page-1])})
	}
}

func newTagger() *tagger {
	root := &structElem{typ: "Document"}
	return &tagger{root: root, cur: root}
}

// open starts a child of the current element and makes it current.
func (t *tagger) open(typ string) *structElem {
	e := t.add(t.cur, typ)
	t.cur = e
	return e
}

// add appends a child of type typ to parent without making it current.
func (t *tagger) add(parent *structElem, typ string) *structElem {
	e := &structElem{typ: typ, parent: parent}
	parent.kids = append(parent.kids, structKid{elem: e})
	return e
}

// close ends e, making its parent current again.
func (t *tagger) close(e *structElem) {
	if e != nil && e.parent != nil {
		t.cur = e.parent
	}
}

// within runs fn with e as the current element.
func (t *tagger) within(e *structElem, fn func()) {
	saved := t.cur
	t.cur = e
	fn()
	t.cur = saved
}

// content wraps what fn draws on the current page in a marked-content
// sequence of the current element, with the next MCID of the page. Content
// drawn inside another sequence is part of that one.
func (r *renderer) content(fn func()) {
	opened := r.openContent()
	fn()
	r.closeMark(opened)
}

// openContent is the opening half of content, for the hot paths that
// should not allocate a closure; closeMark(opened) ends it.
func (r *renderer) openContent() bool {
	return r.openContentFor(r.tags.cur)
}

// openContentFor opens a sequence of element e, or goes on with the one
// held open for it on this page.
func (r *renderer) openContentFor(e *structElem) bool {
	t := r.tags
	if t.inMark {
		return false
	}
	if e == nil || e == t.root {
		return r.openArtifact("")
	}
	page := r.pdf.PageNo()
	if t.held == e && t.heldPage == page {
		t.inMark = true
		return true
	}
	r.flushMark()
	t.held, t.heldPage = e, page
	for len(t.pages) < page {
		t.pages = append(t.pages, nil)
	}
	mcid := len(t.pages[page-1])
	t.pages[page-1] = append(t.pages[page-1], e)
	e.kids = append(e.kids, structKid{page: page, mcid: mcid})
	r.pdf.RawWriteStr("/" + e.typ + " <</MCID " + strconv.Itoa(mcid) + ">> BDC")
	t.inMark = true
	return true
}

// openArtifact opens an artifact sequence with property list props
// (such as "/Type /Pagination /Subtype /Footer"), unless a sequence is
// open already.
func (r *renderer) openArtifact(props string) bool {
	t := r.tags
	if t.inMark {
		return false
	}
	r.flushMark()
	if props == "" {
		r.pdf.RawWriteStr("/Artifact BMC")
	} else {
		r.pdf.RawWriteStr("/Artifact <<" + props + ">> BDC")
	}
	t.inMark = true
	return true
}

// closeMark ends the drawing an open call started, if it started one: an
// artifact's sequence ends here, an element's is held open.
func (r *renderer) closeMark(opened bool) {
	t := r.tags
	if opened {
		t.inMark = false
		if t.held == nil {
			r.pdf.RawWriteStr("EMC")
		}
	}
}

// flushMark closes the sequence held open, before anything else is drawn
// and before the page changes (a sequence never spans pages).
func (r *renderer) flushMark() {
	t := r.tags
	if t.held != nil && !t.inMark {
		t.held = nil
		r.pdf.RawWriteStr("EMC")
	}
}

// artifact marks what fn draws as an artifact: rules, tints, page
// furniture, anything a reader of the text should not hear.
func (r *renderer) artifact(fn func()) {
	r.artifactOf("", fn)
}

// artifactOf is artifact with a property list.
func (r *renderer) artifactOf(props string, fn func()) {
	opened := r.openArtifact(props)
	fn()
	r.closeMark(opened)
}
