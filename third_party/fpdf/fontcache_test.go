package fpdf

import (
	"bytes"
	"compress/zlib"
	"os"
	"testing"
	"time"
)

var (
	proportional = []string{
		"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
		"/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
		"/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
	}
	// Monospaced fonts store one advance for most glyphs (fewer long
	// metrics than glyphs), which getMetrics reads differently.
	monospaced = []string{
		"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
		"/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf",
	}
)

// fontFile is the first of the TrueType files that exists; the test
// skips without one.
func fontFile(t *testing.T, paths ...string) []byte {
	if len(paths) == 0 {
		paths = proportional
	}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			return b
		}
	}
	t.Skip("none of these fonts on this machine:", paths)
	return nil
}

func utf8Document(t *testing.T, ttf []byte, text string) []byte {
	pdf := New("P", "pt", "A4", "")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pdf.SetCreationDate(when)
	pdf.SetModificationDate(when)
	// Without it fonts are written in map order, different every time.
	pdf.SetCatalogSort(true)
	pdf.AddUTF8FontFromBytes("Body", "", ttf)
	pdf.AddUTF8FontFromBytes("Other", "B", ttf)
	pdf.AddPage()
	pdf.SetFont("Body", "", 12)
	pdf.Cell(0, 14, text)
	pdf.SetFont("Other", "B", 12)
	pdf.Cell(0, 14, "Ärger über Öl, ½ € — naïve café")
	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func clearParsedUTF8() {
	parsedUTF8.Lock()
	defer parsedUTF8.Unlock()
	clear(parsedUTF8.byFile)
	parsedUTF8.size = 0
}

// A document whose fonts were parsed for an earlier one is the same
// bytes as one that parses them, whatever the earlier one used.
func TestParsedFontsSameDocument(t *testing.T) {
	ttf := fontFile(t)
	clearParsedUTF8()
	fresh := utf8Document(t, bytes.Clone(ttf), "The quick brown fox")
	clearParsedUTF8()
	_ = utf8Document(t, bytes.Clone(ttf), "Jumps over the lazy dog: 0123456789 ÆØÅ ΑΒΓ")
	if len(parsedUTF8.byFile) != 1 {
		t.Fatalf("%d files kept, want 1", len(parsedUTF8.byFile))
	}
	reused := utf8Document(t, bytes.Clone(ttf), "The quick brown fox")
	if !bytes.Equal(fresh, reused) {
		t.Fatal("a document with kept fonts differs from one that parsed them")
	}
}

// The caller's bytes are read, never written: the release appended a
// glyph's side bearing to a slice of the file in getMetrics, writing
// over the next bytes of a monospaced font's metrics.
func TestParsedFontsLeaveTheFileAlone(t *testing.T) {
	for _, paths := range [][]string{proportional, monospaced} {
		ttf := fontFile(t, paths...)
		clearParsedUTF8()
		orig := bytes.Clone(ttf)
		for range 2 {
			utf8Document(t, ttf, "Ärger über Öl ΑΒΓ ЖЗИ {}[]<>")
		}
		if !bytes.Equal(orig, ttf) {
			t.Fatalf("embedding %s changed the caller's bytes", paths[0])
		}
	}
}

// A compressor taken from the pool writes what a new one writes.
func TestPooledCompressorSameBytes(t *testing.T) {
	inputs := [][]byte{
		bytes.Repeat([]byte("BT /F1 12 Tf 72 720 Td (Hello) Tj ET\n"), 2000),
		make([]byte, 256*256*2),
		[]byte("short"),
		nil,
	}
	for i := range 2 { // the second round gets used compressors
		for _, in := range inputs {
			var want bytes.Buffer
			zw, _ := zlib.NewWriterLevel(&want, zlib.BestSpeed)
			zw.Write(in)
			zw.Close()
			mem := xmem.compress(in)
			if !bytes.Equal(mem.bytes(), want.Bytes()) {
				t.Fatalf("round %d, %d bytes in: pooled compressor wrote other bytes", i, len(in))
			}
			mem.release()
		}
	}
}

// Documents written at once share the kept parse, each with its own copy
// (run with -race).
func TestParsedFontsConcurrent(t *testing.T) {
	ttf := fontFile(t)
	clearParsedUTF8()
	want := utf8Document(t, bytes.Clone(ttf), "The quick brown fox")
	clearParsedUTF8()
	texts := []string{"The quick brown fox", "ΑΒΓ ЖЗИ ÆØÅ", "0123456789", "The quick brown fox"}
	got := make([][]byte, len(texts))
	done := make(chan int)
	for i, text := range texts {
		go func() {
			got[i] = utf8Document(t, bytes.Clone(ttf), text)
			done <- i
		}()
	}
	for range texts {
		<-done
	}
	for _, i := range []int{0, 3} {
		if !bytes.Equal(got[i], want) {
			t.Errorf("document %d, written beside others, differs from one written alone", i)
		}
	}
}
