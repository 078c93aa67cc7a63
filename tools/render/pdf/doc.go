// Package pdf renders a Markdown document to PDF: the file behind the
// create_document tool. It is a plain library: a Document in, PDF bytes
// out, the same bytes for the same Document.
//
// The Markdown is read by the shared package
// [github.com/switchyardhq/switchyard/tools/render/markdown], so a source
// reads the same here as in the docx renderer: CommonMark with GitHub's
// tables and strikethrough, and bare URLs turned into links. Raw HTML is
// skipped (a <br> is read as a line break).
//
// # Layout
//
// Pages are A4 (or US Letter) with 22 mm side margins. The first page opens
// with a title block (the title, and the date when Document.Created is
// set); every page carries the title and "page / pages" in its footer. Body
// text is 10.5 pt with a line height of 1.4; headings step 20/16/13/11.5 pt
// and are kept together with the start of what follows them, so none is
// stranded at the foot of a page. Headings of levels 1 to 3 also become the
// PDF's outline (bookmarks). Code is set in Go Mono on a light grey panel,
// long lines wrapped. Tables span the text width, their header row bold on
// a light tint and repeated on every page the table continues on; numeric
// cells are right-aligned unless the Markdown sets an alignment. Links with
// an http, https or mailto destination are clickable; others are shown as
// plain text.
//
// # Images
//
// ![caption](obj3) embeds the object Document.Elements holds under "obj3",
// scaled to the text width (never beyond its own size at 96 dpi, never
// taller than a page) with its caption centred under it. An id the map
// lacks is a *render.SourceError naming the ids that exist. Images are
// never fetched: any other destination (a URL, a path) is shown as a grey
// note "[image not included: alt text]" where it stood, and so is an
// embed inside a heading or a table cell, where no figure fits. Each
// element is stored once however often it is shown; PNGs without
// transparency or interlacing go into the file as they are, other images
// are flattened onto white first.
//
// # Text the fonts lack
//
// The text faces are the Go fonts (from tools/render/fonts, the one place
// the renderers get faces), embedded as subsets, which cover Latin, Greek
// and Cyrillic. A character they lack is set in the first TrueType font
// of the fallback chain (fonts.Fallbacks) that has it, embedded as a
// subset too. Runs whose glyphs a shaper chooses (Devanagari, Bengali,
// Tamil, Thai, Khmer and the other scripts of fonts.NeedsShaping, and any
// run the shaper sets other than one glyph per character) and characters
// beyond the Basic Multilingual Plane (emoji, drawn in black and white
// from Symbola) are shaped with go-text/typesetting and filled as glyph
// outlines, with their text written invisibly over them and as
// ActualText, so that search, selection and pdftotext find it. Joiners
// are kept after letters of those scripts, for the shaper, and dropped
// elsewhere; skin tones are dropped, and an emoji no outline font has is
// dropped with its space. Every other run of characters no font has is replaced
// by a single U+FFFD replacement character, so missing text is visible
// but never shown as boxes. Text is NFC-normalised first, so decomposed
// accents render. The title metadata and the outline are shown by the
// viewer in its own fonts, so they keep every language (emoji are
// dropped there). Arabic is set in its presentation forms, and lines
// with right-to-left text are put in display order.
//
// # Structure
//
// The file is tagged PDF 1.7: a structure tree gives the reading order
// and the role of each block (headings, paragraphs, lists with their
// labels, tables with header cells, figures with their caption as
// alternative text, links with their annotations), and the footer, rules
// and tints are marked as artifacts. The catalog names Document.Lang and
// carries XMP metadata. The tree is appended to fpdf's output as an
// incremental update; see docs/deliverables.md.
//
// # Limits
//
// Markdown is at most MaxMarkdownBytes, a document at most MaxPages pages,
// and an image at most MaxImagePixels pixels; beyond these Render returns a
// *render.SourceError. The context is checked between blocks.
package pdf
