package pdf

import (
	"encoding/xml"
	"strings"
	"time"
)

// xmpPacket is the document's XMP metadata: the title, language, tool and
// dates that the Info dictionary also holds, for readers that look only
// here (PDF 2.0 deprecates Info).
func xmpPacket(title, lang string, created time.Time) []byte {
	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	date := created.UTC().Format("2006-01-02T15:04:05Z")
	var b strings.Builder
	b.WriteString("<?xpacket begin=\"\uFEFF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n")
	b.WriteString(`<x:xmpmeta xmlns:x="adobe:ns:meta/">
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about=""
 xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:xmp="http://ns.adobe.com/xap/1.0/"
 xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
`)
	if title != "" {
		b.WriteString("<dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">" + esc(title) + "</rdf:li></rdf:Alt></dc:title>\n")
	}
	b.WriteString("<dc:language><rdf:Bag><rdf:li>" + esc(lang) + "</rdf:li></rdf:Bag></dc:language>\n")
	b.WriteString("<dc:format>application/pdf</dc:format>\n")
	b.WriteString("<xmp:CreatorTool>Switchyard</xmp:CreatorTool>\n")
	b.WriteString("<xmp:CreateDate>" + date + "</xmp:CreateDate>\n")
	b.WriteString("<xmp:ModifyDate>" + date + "</xmp:ModifyDate>\n")
	b.WriteString("<pdf:Producer>Switchyard</pdf:Producer>\n")
	b.WriteString("</rdf:Description>\n</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end=\"w\"?>")
	return []byte(b.String())
}
