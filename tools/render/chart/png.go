package chart

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
)

// encodePNG writes an opaque RGBA image as an 8-bit RGB PNG. It exists
// because image/png tries all five row filters on every row, which costs
// more than drawing the chart; charts are large flat areas with
// horizontal structure, for which the Up filter alone compresses about
// as well. The output is deterministic.
func encodePNG(img *image.RGBA) ([]byte, error) {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")

	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8] = 8 // bits per sample
	ihdr[9] = 2 // colour type: RGB
	writeChunk(&out, "IHDR", ihdr[:])

	var data bytes.Buffer
	zw, err := zlib.NewWriterLevel(&data, zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	prev := make([]byte, 3*w)
	cur := make([]byte, 3*w)
	row := make([]byte, 1+3*w)
	row[0] = 2 // filter: Up
	for y := 0; y < h; y++ {
		px := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < w; x++ {
			cur[3*x], cur[3*x+1], cur[3*x+2] = px[4*x], px[4*x+1], px[4*x+2]
		}
		for i, c := range cur {
			row[1+i] = c - prev[i]
		}
		if _, err := zw.Write(row); err != nil {
			return nil, err
		}
		prev, cur = cur, prev
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	writeChunk(&out, "IDAT", data.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes(), nil
}

func writeChunk(out *bytes.Buffer, kind string, data []byte) {
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
