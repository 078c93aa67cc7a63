package docx

import "strconv"

// Relationship types of the parts a document uses.
const (
	relOfficeDocument = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
	relCoreProps      = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
	relExtendedProps  = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties"
	relStyles         = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
	relNumbering      = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering"
	relSettings       = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/settings"
	relFooter         = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer"
	relImage          = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"
	relHyperlink      = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"
)

type relationship struct {
	id, typ, target string
	external        bool
}

// relationships are those of word/document.xml. Ids are handed out in
// order of first use, so they depend only on the document.
type relationships struct {
	list  []relationship
	links map[string]string // URL to id
}

func newRelationships() *relationships {
	r := &relationships{links: make(map[string]string)}
	r.add(relStyles, "styles.xml", false)
	r.add(relNumbering, "numbering.xml", false)
	r.add(relSettings, "settings.xml", false)
	r.add(relFooter, "footer1.xml", false)
	return r
}

func (r *relationships) add(typ, target string, external bool) string {
	id := "rId" + strconv.Itoa(len(r.list)+1)
	r.list = append(r.list, relationship{id: id, typ: typ, target: target, external: external})
	return id
}

// footerID is the id newRelationships gave the footer.
const footerID = "rId4"

// hyperlink returns the id of the relationship to url, adding it on first
// use.
func (r *relationships) hyperlink(url string) string {
	if id, ok := r.links[url]; ok {
		return id
	}
	id := r.add(relHyperlink, url, true)
	r.links[url] = id
	return id
}
