package docx

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // embedded images may be JPEG
	_ "image/png"
	"strconv"

	"github.com/switchyardhq/switchyard/tools/render"
)

// mediaItem is one image file in word/media. An object embedded twice is
// stored once.
type mediaItem struct {
	id          string // object id
	part        string // "media/image1.png", relative to word/
	contentType string
	relID       string
	data        []byte
	w, h        int // pixels
	// ppi is the density a PNG records, pixels per inch; 0 when it
	// records none.
	ppi float64
}

type mediaSet struct {
	byID     map[string]*mediaItem
	items    []*mediaItem
	embedded []string
	total    int
}

// add returns the media item of object id, storing img on first use.
func (m *mediaSet) add(id string, img Image, rels *relationships) (*mediaItem, error) {
	if it, ok := m.byID[id]; ok {
		return it, nil
	}
	if len(img.PNG) > MaxImageBytes {
		return nil, render.Errorf("%s is %d bytes, larger than the %d bytes a document can embed", id, len(img.PNG), MaxImageBytes)
	}
	if m.total+len(img.PNG) > MaxMediaBytes {
		return nil, render.Errorf("embedding %s would take the document's images over %d bytes; embed fewer images", id, MaxMediaBytes)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img.PNG))
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", id, err)
	}
	var ext, ctype string
	switch format {
	case "png":
		ext, ctype = "png", "image/png"
	case "jpeg":
		ext, ctype = "jpeg", "image/jpeg"
	default:
		return nil, fmt.Errorf("image %s: %s images cannot be embedded", id, format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return nil, render.Errorf("%s is %d×%d pixels, which a document cannot embed", id, cfg.Width, cfg.Height)
	}
	if m.byID == nil {
		m.byID = make(map[string]*mediaItem)
	}
	part := "media/image" + strconv.Itoa(len(m.items)+1) + "." + ext
	it := &mediaItem{
		id:          id,
		part:        part,
		contentType: ctype,
		relID:       rels.add(relImage, part, false),
		data:        img.PNG,
		w:           cfg.Width,
		h:           cfg.Height,
	}
	if format == "png" {
		it.ppi = render.PNGDensity(img.PNG)
	}
	m.byID[id] = it
	m.items = append(m.items, it)
	m.embedded = append(m.embedded, id)
	m.total += len(img.PNG)
	return it, nil
}

// fit returns the size of an image of w×h pixels drawn at 96 dpi, scaled
// down to maxWidth and maxPictureHeight (EMU) with its aspect ratio kept.
// Small images are not enlarged.
func fit(w, h int, maxWidth int64) (cx, cy int64) {
	cx, cy = int64(w)*emuPerPx, int64(h)*emuPerPx
	if cx > maxWidth {
		cy = cy * maxWidth / cx
		cx = maxWidth
	}
	if cy > maxPictureHeight {
		cx = cx * maxPictureHeight / cy
		cy = maxPictureHeight
	}
	return max(cx, 1), max(cy, 1)
}
