// Package pngw writes the PNGs the chart and diagram renderers make:
// the chunks go straight into one buffer, and the deflate compressors
// (klauspost/compress at its fastest level, each holding about half a
// megabyte of tables and window) are kept for the next picture instead
// of being made and cleared for every one. A picture the renderers
// encode is the same bytes either way.
package pngw

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// Colour types of the IHDR chunk.
const (
	RGB  byte = 2
	RGBA byte = 6
)

var compressors = sync.Pool{New: func() any {
	zw, err := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	if err != nil {
		// BestSpeed is a valid level: this cannot fail.
		panic("pngw: " + err.Error())
	}
	return zw
}}

// Encoder writes one PNG. Chunks written before the first row go ahead
// of the pixels; Bytes ends the file. An Encoder is for one goroutine.
type Encoder struct {
	out  bytes.Buffer
	zw   *zlib.Writer
	idat int // offset of the IDAT chunk's header in out, once rows started
}

// New starts an 8-bit PNG of w×h pixels of the colour type. sizeHint is
// the expected size of the file: the buffer is made that large at once
// rather than grown (and copied) as the pixels compress.
func New(w, h int, colorType byte, sizeHint int) *Encoder {
	e := &Encoder{idat: -1}
	e.out.Grow(max(sizeHint, 1024))
	e.out.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8] = 8 // bits per sample
	ihdr[9] = colorType
	e.Chunk("IHDR", ihdr[:])
	return e
}

// Chunk writes a chunk; before the first row only.
func (e *Encoder) Chunk(kind string, data []byte) {
	start := e.out.Len()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	e.out.Write(n[:])
	e.out.WriteString(kind)
	e.out.Write(data)
	e.sum(start)
}

// sum appends the CRC of the chunk whose header starts at start.
func (e *Encoder) sum(start int) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(e.out.Bytes()[start+4:]))
	e.out.Write(n[:])
}

// Row compresses one filtered row: its filter byte, then its bytes.
func (e *Encoder) Row(row []byte) error {
	if e.zw == nil {
		e.idat = e.out.Len()
		e.out.Write([]byte{0, 0, 0, 0, 'I', 'D', 'A', 'T'})
		e.zw = compressors.Get().(*zlib.Writer)
		e.zw.Reset(&e.out)
	}
	_, err := e.zw.Write(row)
	return err
}

// Bytes ends the pixels and the file and returns it. The compressor goes
// back for the next picture whether or not it failed: Reset clears it.
func (e *Encoder) Bytes() ([]byte, error) {
	if e.zw == nil {
		// No rows: an empty image still has a (compressed, empty) IDAT.
		if err := e.Row(nil); err != nil {
			return nil, err
		}
	}
	err := e.zw.Close()
	e.zw.Reset(nil)
	compressors.Put(e.zw)
	e.zw = nil
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(e.out.Bytes()[e.idat:], uint32(e.out.Len()-e.idat-8))
	e.sum(e.idat)
	e.Chunk("IEND", nil)
	return e.out.Bytes(), nil
}
