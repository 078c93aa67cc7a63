package extract

import (
	"bytes"
	deflate "compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// zeroFlate returns a zlib stream that inflates to mib MiB of zero bytes.
// It repeats one compressed MiB (flushed, so it ends on a byte boundary
// and refers only to its own output), about 1 KiB each: the test never
// holds what the stream inflates to.
func zeroFlate(t testing.TB, mib int) []byte {
	t.Helper()
	var blk bytes.Buffer
	fw, err := deflate.NewWriter(&blk, deflate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(make([]byte, 1<<20))
	fw.Flush()
	out := []byte{0x78, 0xDA}
	for range mib {
		out = append(out, blk.Bytes()...)
	}
	out = append(out, 0x03, 0x00) // a final, empty block
	// Adler-32 of n zero bytes: the low sum stays 1, the high one adds 1
	// per byte.
	n := uint32((int64(mib) << 20) % 65521)
	return binary.BigEndian.AppendUint32(out, n<<16|1)
}

// xrefIndexBomb is a 1.4 MB PDF whose cross-reference stream inflates to
// 1 GiB and whose Index has 32,000 pairs, each naming every object the
// file may have: read as it says, the table takes seconds of CPU before
// its data runs out.
func xrefIndexBomb(t testing.TB) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.5\n")
	out.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	out.WriteString("2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n")
	data := zeroFlate(t, 1024)
	const size = 80_000 // within maxPDFObjects for the file's size
	var index strings.Builder
	for range 32_000 {
		fmt.Fprintf(&index, "0 %d ", size)
	}
	at := out.Len()
	fmt.Fprintf(&out, "3 0 obj\n<< /Type /XRef /Size %d /W [1 2 1] /Index [%s] /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n",
		size, index.String(), len(data))
	out.Write(data)
	fmt.Fprintf(&out, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return out.Bytes()
}

func TestPDFBombsRefused(t *testing.T) {
	tests := []struct {
		name string
		data func(testing.TB) []byte
		why  string
	}{
		{name: "xref stream of 32,000 Index pairs inflating to 1 GiB", data: xrefIndexBomb, why: "cross-reference entries"},
		{name: "object streams inflating beyond the budget", data: objStmBomb, why: "object streams inflate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data(t)
			if len(data) > 2<<20 {
				t.Fatalf("the bomb has %d bytes; it is meant to be small", len(data))
			}
			r := &watchedReader{r: bytes.NewReader(data)}
			_, _, err := Text(t.Context(), mimePDF, r, int64(len(data)), 1000)
			if !errors.Is(err, ErrLimit) || !strings.Contains(fmt.Sprint(err), tt.why) {
				t.Errorf("error = %v, want ErrLimit saying %q", err, tt.why)
			}
			waitForParsers(t)
			// Refused from what its dictionaries say, not after
			// inflating what they promise.
			if n := r.read(); n > int64(len(data)) {
				t.Errorf("read %d bytes of a %d-byte file", n, len(data))
			}
		})
	}
}

// objStmBomb is a PDF whose cross-reference stream points into many
// object streams of 15 MiB each, under the limit on one but far over
// what a document may inflate in all.
func objStmBomb(t testing.TB) []byte {
	const streams = 40
	var out bytes.Buffer
	out.WriteString("%PDF-1.5\n")
	offsets := []int{0}
	offsets = append(offsets, out.Len())
	out.WriteString("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	offsets = append(offsets, out.Len())
	out.WriteString("2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n")
	data := zeroFlate(t, 15)
	for i := range streams {
		offsets = append(offsets, out.Len())
		fmt.Fprintf(&out, "%d 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length %d >>\nstream\n", 3+i, len(data))
		out.Write(data)
		out.WriteString("\nendstream\nendobj\n")
	}
	// Objects 3+streams... live in the object streams, one in each.
	n := 3 + 2*streams
	var entries bytes.Buffer
	for obj := range n + 1 {
		switch {
		case obj == 0:
			entries.Write([]byte{0, 0, 0, 0, 0})
		case obj < 3+streams:
			entries.Write([]byte{1, byte(offsets[obj] >> 24), byte(offsets[obj] >> 16), byte(offsets[obj] >> 8), byte(offsets[obj])})
		case obj < n:
			stm := 3 + obj - (3 + streams)
			entries.Write([]byte{2, 0, 0, 0, byte(stm)})
		default:
			at := out.Len()
			entries.Write([]byte{1, byte(at >> 24), byte(at >> 16), byte(at >> 8), byte(at)})
		}
	}
	at := out.Len()
	fmt.Fprintf(&out, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 0] /Root 1 0 R /Length %d >>\nstream\n", n, n+1, entries.Len())
	out.Write(entries.Bytes())
	fmt.Fprintf(&out, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return out.Bytes()
}

// sharedContentPDF has 50 pages that all show one content stream of 30
// MiB of white space: 3 GiB to inflate, twice, for no text.
func sharedContentPDF(t testing.TB) []byte {
	var b pdfBuilder
	b.add("<< /Type /Catalog /Pages 2 0 R >>")
	var kids strings.Builder
	for i := range 50 {
		fmt.Fprintf(&kids, "%d 0 R ", 4+i)
	}
	b.add("<< /Type /Pages /Kids [" + kids.String() + "] /Count 50 >>")
	b.add(stream("/Filter /FlateDecode", string(zeroFlate(t, 30))))
	for range 50 {
		b.add("<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>")
	}
	return b.bytes(1)
}

func TestPDFInflationBudget(t *testing.T) {
	data := sharedContentPDF(t)
	r := &watchedReader{r: bytes.NewReader(data)}
	text, truncated, err := Text(t.Context(), mimePDF, r, int64(len(data)), 1000)
	if err != nil || text != "" || !truncated {
		t.Fatalf("Text = %q, %v, %v; want no text, truncated at the budget", text, truncated, err)
	}
	// Each page reads the stream's compressed bytes twice (measured,
	// then interpreted); the budget allows a few pages, not 50.
	stream := int64(len(zeroFlate(t, 30)))
	pages := int64(maxPDFInflated/(2*30<<20) + 1)
	if n := r.read(); n > 2*stream*pages+int64(len(data)) {
		t.Errorf("read %d bytes for a stream of %d", n, stream)
	}
}

// TestPDFParserStopsWithContext checks that the parsing goroutine stops
// reading once the context ends, rather than finishing the page it is
// on: a content stream of 30 MiB of white space, shared by many pages,
// gives the parser seconds of work in which no operator runs.
func TestPDFParserStopsWithContext(t *testing.T) {
	data := sharedContentPDF(t)
	content := int64(bytes.Index(data, []byte("stream\n")) + len("stream\n"))
	contentEnd := int64(bytes.Index(data, []byte("endstream")))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := &watchedReader{r: bytes.NewReader(data), cancelFrom: content, cancelTo: contentEnd, cancel: cancel}
	_, _, err := Text(ctx, mimePDF, r, int64(len(data)), 1000)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	waitForParsers(t)
	if n := r.readAfterCancel(); n > 0 {
		t.Errorf("the parser read %d bytes after the context ended", n)
	}
}

// watchedReader counts what is read through it and, at the first read
// from an offset within [cancelFrom, cancelTo), calls cancel and counts
// what is read after.
type watchedReader struct {
	r                    io.ReaderAt
	cancelFrom, cancelTo int64
	cancel               func()

	mu       sync.Mutex
	total    int64
	canceled bool
	after    int64
}

func (w *watchedReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := w.r.ReadAt(p, off)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total += int64(n)
	if w.canceled {
		w.after += int64(n)
	} else if w.cancel != nil && off >= w.cancelFrom && off < w.cancelTo {
		w.canceled = true
		w.cancel()
	}
	return n, err
}

func (w *watchedReader) read() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

func (w *watchedReader) readAfterCancel() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.after
}

// waitForParsers waits until no goroutine is inside this package's PDF
// code or the PDF library, however long that takes: a parser that never
// stops fails the test by its timeout.
func waitForParsers(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		busy := false
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "files/extract.pdf") || strings.Contains(g, "ledongthuc/pdf.") {
				busy = true
			}
		}
		if !busy {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
