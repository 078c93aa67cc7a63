package docx

import (
	"archive/zip"
	"bytes"
	"io"
	"time"
)

// part is one file of the package.
type part struct {
	name        string
	contentType string // "": covered by a Default in [Content_Types].xml
	data        []byte
}

// Content types of the parts.
const (
	ctRels      = "application/vnd.openxmlformats-package.relationships+xml"
	ctDocument  = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
	ctStyles    = "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"
	ctNumbering = "application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"
	ctSettings  = "application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"
	ctFooter    = "application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"
	ctCore      = "application/vnd.openxmlformats-package.core-properties+xml"
	ctExtended  = "application/vnd.openxmlformats-officedocument.extended-properties+xml"
)

// writePackage writes the converted document as a zip package. Entries
// come in a fixed order, all dated created.
func writePackage(w io.Writer, c *converter, created time.Time) error {
	parts := []part{
		{name: "_rels/.rels", data: packageRels()},
		{name: "docProps/core.xml", contentType: ctCore, data: coreXML(c.title, created)},
		{name: "docProps/app.xml", contentType: ctExtended, data: []byte(appXML)},
		{name: "word/document.xml", contentType: ctDocument, data: documentXML(c.blocks)},
		{name: "word/styles.xml", contentType: ctStyles, data: []byte(stylesXML)},
		{name: "word/numbering.xml", contentType: ctNumbering, data: c.lists.xml()},
		{name: "word/settings.xml", contentType: ctSettings, data: []byte(settingsXML)},
		{name: "word/footer1.xml", contentType: ctFooter, data: []byte(footerXML)},
		{name: "word/_rels/document.xml.rels", data: documentRels(c.rels)},
	}
	for _, m := range c.media.items {
		parts = append(parts, part{name: "word/" + m.part, data: m.data})
	}
	// [Content_Types].xml goes first: some readers expect it there.
	parts = append([]part{{name: "[Content_Types].xml", data: contentTypes(parts, c.media.items)}}, parts...)

	zw := zip.NewWriter(w)
	for _, p := range parts {
		method := zip.Deflate
		if isMedia(p.name) {
			method = zip.Store // PNG and JPEG are compressed already
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: p.name, Method: method, Modified: created})
		if err != nil {
			return err
		}
		if _, err := fw.Write(p.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

func isMedia(name string) bool {
	return len(name) > len("word/media/") && name[:len("word/media/")] == "word/media/"
}

func contentTypes(parts []part, media []*mediaItem) []byte {
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`)
	b.WriteString(`<Default Extension="rels" ContentType="` + ctRels + `"/>`)
	b.WriteString(`<Default Extension="xml" ContentType="application/xml"/>`)
	seen := map[string]bool{}
	for _, m := range media {
		ext := m.part[bytes.LastIndexByte([]byte(m.part), '.')+1:]
		if !seen[ext] {
			seen[ext] = true
			b.WriteString(`<Default Extension="` + ext + `" ContentType="` + m.contentType + `"/>`)
		}
	}
	for _, p := range parts {
		if p.contentType != "" {
			b.WriteString(`<Override PartName="/` + p.name + `" ContentType="` + p.contentType + `"/>`)
		}
	}
	b.WriteString(`</Types>`)
	return b.Bytes()
}

func packageRels() []byte {
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	b.WriteString(`<Relationship Id="rId1" Type="` + relOfficeDocument + `" Target="word/document.xml"/>`)
	b.WriteString(`<Relationship Id="rId2" Type="` + relCoreProps + `" Target="docProps/core.xml"/>`)
	b.WriteString(`<Relationship Id="rId3" Type="` + relExtendedProps + `" Target="docProps/app.xml"/>`)
	b.WriteString(`</Relationships>`)
	return b.Bytes()
}

func documentRels(r *relationships) []byte {
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for _, rel := range r.list {
		b.WriteString(`<Relationship Id="` + rel.id + `" Type="` + rel.typ + `" Target="`)
		escape(&b, rel.target)
		b.WriteString(`"`)
		if rel.external {
			b.WriteString(` TargetMode="External"`)
		}
		b.WriteString(`/>`)
	}
	b.WriteString(`</Relationships>`)
	return b.Bytes()
}

func coreXML(title string, created time.Time) []byte {
	date := created.Format("2006-01-02T15:04:05Z")
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`)
	b.WriteString(`<dc:title>`)
	escape(&b, title)
	b.WriteString(`</dc:title>`)
	b.WriteString(`<dcterms:created xsi:type="dcterms:W3CDTF">` + date + `</dcterms:created>`)
	b.WriteString(`<dcterms:modified xsi:type="dcterms:W3CDTF">` + date + `</dcterms:modified>`)
	b.WriteString(`</cp:coreProperties>`)
	return b.Bytes()
}

const appXML = xmlHeader + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Switchyard</Application></Properties>`

// settingsXML declares Word 2013+ compatibility, so that Word does not
// open the document in compatibility mode.
const settingsXML = xmlHeader + `<w:settings xmlns:w="` + nsW + `">` +
	`<w:defaultTabStop w:val="720"/><w:characterSpacingControl w:val="doNotCompress"/>` +
	`<w:compat><w:compatSetting w:name="compatibilityMode" w:uri="http://schemas.microsoft.com/office/word" w:val="15"/></w:compat>` +
	`</w:settings>`

// footerXML shows "page / pages", centred. The cached field results are
// placeholders that Word and LibreOffice recompute on layout.
const footerXML = xmlHeader + `<w:ftr xmlns:w="` + nsW + `" xmlns:r="` + nsR + `">` +
	`<w:p><w:pPr><w:pStyle w:val="Footer"/></w:pPr>` +
	`<w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple>` +
	`<w:r><w:t xml:space="preserve"> / </w:t></w:r>` +
	`<w:fldSimple w:instr=" NUMPAGES "><w:r><w:t>1</w:t></w:r></w:fldSimple>` +
	`</w:p></w:ftr>`
