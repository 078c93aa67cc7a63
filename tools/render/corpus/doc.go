// Package corpus is the visual regression corpus of the renderers: about
// twenty deliverables a professional would send (reports, a memo, a CJK
// report, right-to-left letters, long tables, a 10,000-row workbook, wide
// and tall charts and diagrams), rendered to PNG in its tests and compared
// with the reviewed pictures in testdata/golden within a tolerance.
//
// PDFs are rasterised with poppler's pdftoppm, Word and Excel files with
// LibreOffice (headless, to PDF) and then pdftoppm, all at 50 DPI. Charts
// and diagrams are the renderers' own PNGs, scaled down. A difference is
// counted per pixel, after allowing every pixel a one-pixel shift and an
// anti-aliasing margin, so font hinting does not fail the test but a lost
// glyph, marker or rule does.
//
// LibreOffice runs with a fontconfig file of the test's that hides the
// Liberation fonts older than 2.0 (officeFonts): Word files declare
// Arial, which becomes Liberation Sans, and only 2.x has Hebrew, so a
// machine with both Debian packages, or with one, would otherwise set
// Hebrew in a face of its own. scripts/fonts.sh --tests installs what the
// corpus needs. After a deliberate change to a renderer:
//
//	go test ./tools/render/corpus -update
//	go test ./tools/render/corpus -run 'TestCorpus/docx-rtl-letter$' -update
//
// (the second rewrites one entry's pictures only), then look at every
// changed picture before committing it.
package corpus
