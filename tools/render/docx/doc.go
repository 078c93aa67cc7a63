// Package docx renders Markdown to a Word document (.docx). It backs the
// create_word_document tool: the caller hands over the model's Markdown
// and the images it may embed by object id (![caption](obj3)), and gets
// the file's bytes back.
//
// The Markdown is read by the shared package tools/render/markdown, so a
// source reads the same here and in the PDF renderer. The tree is turned
// into a small model of blocks (paragraphs, tables) and written out as
// WordprocessingML.
//
// The package writes the OOXML parts itself with archive/zip and
// encoding/xml rather than through a docx library. The MIT-licensed
// github.com/gomutex/godocx was considered: it builds on a bundled
// template whose styles.xml it cannot extend (no code, caption or quote
// styles, no tinted table header), it wires numbering by patching the
// template's XML with regular expressions, and its hyperlinks carry a
// single run, so links with bold or code inside cannot be expressed. The
// parts a document needs are few and stable (document, styles,
// numbering, settings, footer, relationships, content types,
// properties, media), and owning them gives real Word styles, the exact
// numbering, and bytes that depend on nothing but the input.
//
// What a document gets:
//   - built-in style names (Title, heading 1-4, List Bullet, List Number,
//     Table Grid, caption, Quote, Hyperlink) so that Word's navigation
//     pane, table of contents and style gallery work, plus a shaded
//     monospaced Code style for code blocks and Code Char for code spans;
//   - nested bullet and numbered lists through numbering.xml, each
//     numbered list restarting at its own first number;
//   - tables in Table Grid with a bold, tinted header row that repeats on
//     every page, numeric columns right-aligned, and column widths from
//     content: no column narrower than its longest word while another
//     has room, the slack to the columns whose text wraps;
//   - fonts for every script: Calibri for Latin, Greek and Cyrillic,
//     Microsoft YaHei for Chinese, Japanese and Korean (w:eastAsia), Arial
//     for Hebrew, Arabic and other complex scripts (w:cs). Word has
//     them; LibreOffice substitutes Liberation Sans for Arial, which has
//     Hebrew only from 2.0 on, so on Linux the Hebrew face depends on
//     whether fonts-liberation2 is installed (the visual corpus in
//     tools/render/corpus requires it);
//   - external hyperlinks (http, https, mailto) that click;
//   - embedded images inline, scaled to the text width with their aspect
//     ratio kept, captioned underneath;
//   - A4 pages with 25 mm margins and "page / pages" in the footer;
//   - the title in the core properties.
//
// Rendering is deterministic: the zip entries, their order and dates,
// relationship ids and drawing ids depend only on the Document.
package docx
