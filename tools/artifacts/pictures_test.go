package artifacts

import (
	"context"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/render/diagram"
)

// TestPicturesAreKeptPerAccount: a chart the account just drew is not
// drawn again for its document; another account's same chart is.
func TestPicturesAreKeptPerAccount(t *testing.T) {
	h := newHarness(t)
	h.mustCall(tools.NameCreateChart, barArgs)
	s := h.tools[tools.NameCreateDocument].(*createTool).s
	src, title := h.env.Objects["obj1"].Source, h.env.Objects["obj1"].Title

	first, err := s.drawChart(context.Background(), "acct", title, src)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.drawChart(context.Background(), "acct", title, src)
	if err != nil {
		t.Fatal(err)
	}
	if &first[0] != &again[0] {
		t.Error("the same account's chart was drawn again")
	}
	other, err := s.drawChart(context.Background(), "other", title, src)
	if err != nil {
		t.Fatal(err)
	}
	if &other[0] == &first[0] {
		t.Error("another account was given the first account's picture")
	}
	retitled, err := s.drawChart(context.Background(), "acct", title+" 2026", src)
	if err != nil {
		t.Fatal(err)
	}
	if &retitled[0] == &first[0] {
		t.Error("a chart with another title was taken from the cache")
	}

	d := diagram.Diagram{Source: "digraph { a -> b }", Language: diagram.LanguageDOT, Theme: "light", Aspect: "landscape"}
	light, err := s.drawDiagram(context.Background(), "acct", d)
	if err != nil {
		t.Fatal(err)
	}
	d.Theme = "dark"
	dark, err := s.drawDiagram(context.Background(), "acct", d)
	if err != nil {
		t.Fatal(err)
	}
	if &light[0] == &dark[0] {
		t.Error("the dark diagram was taken from the light one's entry")
	}
}

func TestPicturesStayWithinTheirLimit(t *testing.T) {
	var c pictures
	big := picturesLimit / 10
	for i := range 12 {
		c.put(pictureKey("acct", string(rune('a'+i))), make([]byte, big))
	}
	if c.size > picturesLimit {
		t.Errorf("the cache holds %d bytes, over its limit of %d", c.size, picturesLimit)
	}
	if _, ok := c.get(pictureKey("acct", "a")); ok {
		t.Error("the oldest picture is still kept")
	}
	if _, ok := c.get(pictureKey("acct", "l")); !ok {
		t.Error("the newest picture is not kept")
	}
	c.put(pictureKey("acct", "huge"), make([]byte, picturesLimit/4))
	if _, ok := c.get(pictureKey("acct", "huge")); ok {
		t.Error("a picture over an eighth of the limit is kept")
	}
	var none *pictures
	none.put(pictureKey("x"), []byte{1})
	if _, ok := none.get(pictureKey("x")); ok {
		t.Error("a nil cache kept a picture")
	}
	if pictureKey("ab", "c") == pictureKey("a", "bc") {
		t.Error("keys of different parts collide")
	}
}
