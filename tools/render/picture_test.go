package render

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func TestCutAbove(t *testing.T) {
	// 100 rows over 100 units; rows 60..69 are a gap with 2 pixels of
	// edge, the rest nodes.
	ink := make([]int, 100)
	for i := range ink {
		ink[i] = 50
		if i >= 60 && i < 70 {
			ink[i] = 2
		}
	}
	if got := CutAbove(ink, 100, 0, 80); got != 65 {
		t.Errorf("cut at %.1f, want 65, the middle of the gap", got)
	}
	// The gap is further up than CutReach allows: cut where the page ends.
	if got := CutAbove(ink, 100, 0, 95); got != 95 {
		t.Errorf("cut at %.1f, want 95", got)
	}
	// The page ends inside the gap, which goes on below: cut there.
	if got := CutAbove(ink, 100, 0, 65); got != 65 {
		t.Errorf("cut at %.1f, want 65", got)
	}
	// A later page: the part from 20 on, room for 50; the gap at 60..69
	// is beyond its end (70), in reach: the cut is at 65, 45 into it.
	if got := CutAbove(ink, 100, 20, 50); got != 45 {
		t.Errorf("cut at %.1f, want 45", got)
	}
	if got := CutAbove(nil, 100, 0, 80); got != 80 {
		t.Errorf("without rows cut at %.1f, want 80", got)
	}
}

func TestInkRows(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 10, 4))
	for y := range 4 {
		for x := range 10 {
			img.Set(x, y, color.NRGBA{20, 20, 30, 255}) // a dark theme's background
		}
	}
	img.Set(3, 1, color.NRGBA{200, 200, 200, 255})
	img.Set(4, 1, color.NRGBA{23, 22, 33, 255}) // noise within the tolerance
	for x := range 10 {
		img.Set(x, 2, color.NRGBA{90, 140, 200, 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	got := InkRows(buf.Bytes())
	want := []int{0, 1, 10, 0}
	if len(got) != len(want) {
		t.Fatalf("InkRows = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("InkRows = %v, want %v", got, want)
		}
	}
	if InkRows([]byte("not a picture")) != nil {
		t.Error("rows for bytes that are no picture")
	}
}
