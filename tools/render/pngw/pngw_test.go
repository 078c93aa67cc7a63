package pngw

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/klauspost/compress/zlib"
)

// reference writes the PNG the renderers wrote before this package: a new
// compressor per picture and the pixels compressed into a buffer of their
// own, then copied into the file.
func reference(t *testing.T, w, h int, rows [][]byte) []byte {
	t.Helper()
	var out bytes.Buffer
	chunk := func(kind string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		out.Write(n[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(kind))
		crc.Write(data)
		out.WriteString(kind)
		out.Write(data)
		binary.BigEndian.PutUint32(n[:], crc.Sum32())
		out.Write(n[:])
	}
	out.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2
	chunk("IHDR", ihdr[:])
	var data bytes.Buffer
	zw, err := zlib.NewWriterLevel(&data, zlib.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := zw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	chunk("IDAT", data.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// picture makes Up-filtered RGB rows of flat bands with noise, like a
// chart's: long matches and literals both.
func picture(seed uint64, w, h int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := make([][]byte, h)
	for y := range rows {
		r := make([]byte, 1+3*w)
		r[0] = 2
		if y%7 == 0 {
			for x := 1; x < len(r); x++ {
				if rng.IntN(4) == 0 {
					r[x] = byte(rng.IntN(256))
				}
			}
		}
		rows[y] = r
	}
	return rows
}

func encode(t *testing.T, w, h int, rows [][]byte) []byte {
	t.Helper()
	e := New(w, h, RGB, 0)
	for _, r := range rows {
		if err := e.Row(r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSameBytesAsAFreshCompressor checks that a reused compressor writes
// what a new one would, whatever it compressed before: pictures of
// different sizes and contents, in turn and from several goroutines.
func TestSameBytesAsAFreshCompressor(t *testing.T) {
	sizes := [][2]int{{1000, 625}, {37, 5}, {1, 1}, {640, 900}, {0, 0}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				s := sizes[(g+i)%len(sizes)]
				rows := picture(uint64(g*100+i), s[0], s[1])
				got, want := encode(t, s[0], s[1], rows), reference(t, s[0], s[1], rows)
				if !bytes.Equal(got, want) {
					t.Errorf("%dx%d, picture %d of goroutine %d: %d bytes, want the %d of a fresh compressor", s[0], s[1], i, g, len(got), len(want))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestDecodes checks the file against the standard decoder, chunks
// before the pixels included.
func TestDecodes(t *testing.T) {
	e := New(3, 2, RGB, 0)
	e.Chunk("pHYs", []byte{0, 0, 0x0e, 0xc4, 0, 0, 0x0e, 0xc4, 1})
	for _, r := range [][]byte{{0, 10, 20, 30, 40, 50, 60, 70, 80, 90}, {2, 1, 1, 1, 0, 0, 0, 255, 255, 255}} {
		if err := e.Row(r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rgba, ok := img.(*image.RGBA)
	if !ok {
		t.Fatalf("decoded as %T", img)
	}
	want := []byte{10, 20, 30, 255, 40, 50, 60, 255, 70, 80, 90, 255, 11, 21, 31, 255, 40, 50, 60, 255, 69, 79, 89, 255}
	if !bytes.Equal(rgba.Pix, want) {
		t.Fatalf("pixels %v, want %v", rgba.Pix, want)
	}
}
