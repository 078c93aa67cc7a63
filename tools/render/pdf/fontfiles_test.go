package pdf

import (
	"crypto/sha256"
	"testing"
)

// fpdf is handed the shared font files, not copies (so that it finds a
// face it parsed for an earlier document): it must leave them as they
// were, whatever the documents set in them.
func TestFontFilesUnchanged(t *testing.T) {
	sums := func() map[string][sha256.Size]byte {
		out := map[string][sha256.Size]byte{}
		for fc := range faceCount {
			out[fc.family()+fc.style()] = sha256.Sum256(fc.ttf())
		}
		for k, fb := range pdfFallbacks() {
			out[fallbackFamily(uint8(k+1))] = sha256.Sum256(fb.src.TTF())
		}
		return out
	}
	before := sums()
	docs := sampleDocs(t)
	for range 2 {
		for _, d := range docs {
			renderOK(t, d)
		}
	}
	after := sums()
	if len(before) <= int(faceCount) {
		t.Logf("no fallback fonts on this machine: only the %d faces checked", faceCount)
	}
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("rendering changed the font file of %s", name)
		}
	}
}
