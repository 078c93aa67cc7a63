package docx

import (
	"github.com/switchyardhq/switchyard/tools/render"
)

// A picture is fitted to the text width and to maxPictureHeight, so that
// it stays on one page with its caption. When that would draw it at less
// than render.MinReadableScale of its own size (its pixels at the density
// its PNG records), its labels would be too small to read: it is drawn at
// that scale instead and cut into parts, one a page, each part the same
// image file cropped (a:srcRect) to its band of the picture. The cuts
// fall in bands of background between a diagram's nodes
// (render.CutAbove). Word lays the pages out itself, so a part goes where
// Word puts it: on the page it starts on when it fits there, else on the
// next, which may leave the end of the page before it blank.

const (
	// maxPartHeight is the tallest part of a cut picture: a page, less
	// the Figure paragraph's spacing.
	maxPartHeight = int64(textHeight) * emuPerTwip * 92 / 100
	// maxPictureParts bounds the pages one picture is cut over.
	maxPictureParts = 4
	// cropWhole is a:srcRect's unit: thousandths of a percent.
	cropWhole = 100000
)

// picturePart is a part of a picture, drawn cx × cy EMU, showing the
// band from top to bottom (in cropWhole units of its height).
type picturePart struct {
	cx, cy      int64
	top, bottom int
}

// pictureParts lays a picture out in the text width maxWidth: one part
// when it fits on a page readably, else its parts, top to bottom.
func pictureParts(it *mediaItem, maxWidth int64) []picturePart {
	cx, cy := fit(it.w, it.h, maxWidth)
	whole := []picturePart{{cx: cx, cy: cy, top: 0, bottom: cropWhole}}
	if it.ppi <= 0 {
		return whole
	}
	w, h := float64(it.w), float64(it.h)
	least := min(render.MinReadableScale*w/it.ppi*emuPerInch, w*emuPerPx, float64(maxWidth))
	// Over maxPictureParts pages at most, even when every cut but the
	// last moves up by render.CutReach.
	most := float64(maxPictureParts-1)*(1-render.CutReach)*float64(maxPartHeight) + float64(maxPictureHeight)
	least = min(least, most*w/h)
	if float64(cx) >= least {
		return whole
	}
	cx = int64(least)
	full := least * h / w // the picture's height, EMU
	if full <= float64(maxPictureHeight) {
		return []picturePart{{cx: cx, cy: max(int64(full), 1), top: 0, bottom: cropWhole}}
	}
	ink := render.InkRows(it.data)
	var parts []picturePart
	for done := 0.0; done < full-0.5; {
		rest := full - done
		part := rest
		switch {
		case rest <= float64(maxPictureHeight):
			// The last part, with room for its caption.
		case rest <= float64(maxPartHeight):
			// The rest fits a page but not with its caption: leave some
			// for the next page, so that the caption is not alone there.
			part = render.CutAbove(ink, full, done, max(rest-float64(maxPictureHeight)/2, rest/2))
		default:
			part = render.CutAbove(ink, full, done, float64(maxPartHeight))
		}
		top, bottom := cropAt(done, full), cropAt(done+part, full)
		parts = append(parts, picturePart{cx: cx, cy: max(int64(part), 1), top: top, bottom: bottom})
		done += part
	}
	return parts
}

// cropAt is position y of a picture h tall in cropWhole units.
func cropAt(y, h float64) int {
	return min(int(y/h*cropWhole+0.5), cropWhole)
}

const emuPerInch = 914400
