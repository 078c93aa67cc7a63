package fonts

import (
	"encoding/binary"
	"errors"

	"golang.org/x/image/font/sfnt"
)

// WithTextHyphen returns a copy of the TrueType file ttf whose hyphen
// (U+002D) is drawn with the soft hyphen's glyph (U+00AD), outline and
// advance. The Go fonts draw the hyphen as long as an en dash, so that
// "year-on-year" reads as "year–on–year"; their soft hyphen has the
// shape and width of a text hyphen. Text keeps its hyphen character,
// so that it is copied and searched as typed. A font whose soft hyphen
// does not fit in the hyphen's place comes back unchanged.
func WithTextHyphen(ttf []byte) ([]byte, error) {
	fnt, err := sfnt.Parse(ttf)
	if err != nil {
		return nil, err
	}
	var buf sfnt.Buffer
	hy, err1 := fnt.GlyphIndex(&buf, '-')
	soft, err2 := fnt.GlyphIndex(&buf, '\u00AD')
	if err1 != nil || err2 != nil || hy == 0 || soft == 0 || hy == soft {
		return ttf, nil
	}
	tables, err := tableDir(ttf)
	if err != nil {
		return nil, err
	}
	table := func(tag string) ([]byte, int) {
		t, ok := tables[tag]
		if !ok {
			return nil, 0
		}
		return ttf[t[0] : t[0]+t[1]], t[0]
	}
	head, _ := table("head")
	loca, _ := table("loca")
	glyf, glyfOff := table("glyf")
	hhea, _ := table("hhea")
	hmtx, hmtxOff := table("hmtx")
	if len(head) < 54 || loca == nil || glyf == nil || len(hhea) < 36 || hmtx == nil {
		return ttf, nil
	}
	out := append([]byte(nil), ttf...)
	long := binary.BigEndian.Uint16(head[50:52]) == 1
	glyphAt := func(g sfnt.GlyphIndex) (start, end int, ok bool) {
		if long {
			if 4*int(g)+8 > len(loca) {
				return 0, 0, false
			}
			return int(binary.BigEndian.Uint32(loca[4*int(g):])), int(binary.BigEndian.Uint32(loca[4*int(g)+4:])), true
		}
		if 2*int(g)+4 > len(loca) {
			return 0, 0, false
		}
		return 2 * int(binary.BigEndian.Uint16(loca[2*int(g):])), 2 * int(binary.BigEndian.Uint16(loca[2*int(g)+2:])), true
	}
	hs, he, ok1 := glyphAt(hy)
	ss, se, ok2 := glyphAt(soft)
	if !ok1 || !ok2 || se-ss > he-hs || he > len(glyf) || se > len(glyf) {
		return ttf, nil
	}
	copy(out[glyfOff+hs:], glyf[ss:se])
	clear(out[glyfOff+hs+(se-ss) : glyfOff+he])
	// Advance and left side bearing: long metrics for the first
	// numberOfHMetrics glyphs, bearings alone after them.
	n := int(binary.BigEndian.Uint16(hhea[34:36]))
	metric := func(g sfnt.GlyphIndex) (adv, lsb []byte) {
		if int(g) < n {
			return hmtx[4*int(g) : 4*int(g)+2], hmtx[4*int(g)+2 : 4*int(g)+4]
		}
		i := 4*n + 2*(int(g)-n)
		return hmtx[4*(n-1) : 4*(n-1)+2], hmtx[i : i+2]
	}
	if int(hy) >= n || 4*n > len(hmtx) || int(soft) >= n && 4*n+2*(int(soft)-n)+2 > len(hmtx) {
		return ttf, nil
	}
	adv, lsb := metric(soft)
	copy(out[hmtxOff+4*int(hy):], adv)
	copy(out[hmtxOff+4*int(hy)+2:], lsb)
	return out, nil
}

// tableDir returns the offset and length of each table of a TrueType
// file, by tag.
func tableDir(ttf []byte) (map[string][2]int, error) {
	if len(ttf) < 12 {
		return nil, errors.New("fonts: short font file")
	}
	n := int(binary.BigEndian.Uint16(ttf[4:6]))
	if 12+16*n > len(ttf) {
		return nil, errors.New("fonts: bad table directory")
	}
	out := make(map[string][2]int, n)
	for i := range n {
		rec := ttf[12+16*i:]
		off, length := int(binary.BigEndian.Uint32(rec[8:12])), int(binary.BigEndian.Uint32(rec[12:16]))
		if off < 0 || length < 0 || off+length > len(ttf) {
			return nil, errors.New("fonts: table outside the file")
		}
		out[string(rec[:4])] = [2]int{off, length}
	}
	return out, nil
}
