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
// LibreOffice runs with a fontconfig file of the test's that shows it
// only the fonts of the Debian packages scripts/fonts.sh --tests
// installs (officePackages), so other fonts a machine has do not change
// its substitutions. Among those hidden is chromium's Liberation 1.x: Word
// files declare Arial, which becomes Liberation Sans, and only 2.x has
// Hebrew.
//
// After a deliberate change to a renderer:
//
//	go test ./tools/render/corpus -update
//	go test ./tools/render/corpus -run 'TestCorpus/docx-rtl-letter$' -update
//
// (the second rewrites one entry's pictures only), then look at every
// changed picture before committing it.
package corpus
