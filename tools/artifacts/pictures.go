package artifacts

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"sync"

	"github.com/switchyardhq/switchyard/tools/render/chart"
	"github.com/switchyardhq/switchyard/tools/render/diagram"
)

// picturesLimit bounds the PNG bytes the picture cache holds: a chart is
// 50-150 KB, a large diagram a few hundred.
const picturesLimit = 32 << 20

// pictures keeps the charts and diagrams drawn lately. A conversation
// makes its charts and diagrams first and then a document that embeds
// them, which draws each one again from its source: about three quarters
// of create_document's time with three charts and a diagram. The key is
// everything that decides the pixels (the source, title, theme and
// aspect) and the account, so that one account cannot learn from the
// time a document takes what another one drew. The zero value and nil
// keep nothing.
type pictures struct {
	mu    sync.Mutex
	size  int
	lru   *list.List // of *picture, the most recently used first
	byKey map[[32]byte]*list.Element
}

type picture struct {
	key [32]byte
	png []byte
}

// pictureKey hashes the parts that decide a picture, each with its
// length so that no two lists of parts run together alike.
func pictureKey(parts ...string) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (c *pictures) get(key [32]byte) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*picture).png, true
}

func (c *pictures) put(key [32]byte, png []byte) {
	if c == nil || len(png) > picturesLimit/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[[32]byte]*list.Element{}
		c.lru = list.New()
	}
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		return
	}
	c.byKey[key] = c.lru.PushFront(&picture{key: key, png: png})
	c.size += len(png)
	for c.size > picturesLimit {
		old := c.lru.Remove(c.lru.Back()).(*picture)
		delete(c.byKey, old.key)
		c.size -= len(old.png)
	}
}

// drawChart draws a chart from its source, or returns the same chart
// drawn lately for the account. The PNG is shared: callers do not
// change it.
func (s *shared) drawChart(ctx context.Context, account, title, source string) ([]byte, error) {
	return s.drawChartAt(ctx, pictureKey(account, "chart", title, source), title, source, 1)
}

// embedChart is drawChart for a chart a document folds in: the chart as
// create_chart drew it when it is still kept, else drawn at
// chart.EmbedScale, the density the document shows it at.
func (s *shared) embedChart(ctx context.Context, account, title, source string) ([]byte, error) {
	if png, ok := s.pictures.get(pictureKey(account, "chart", title, source)); ok {
		return png, nil
	}
	return s.drawChartAt(ctx, pictureKey(account, "embedded chart", title, source), title, source, chart.EmbedScale)
}

func (s *shared) drawChartAt(ctx context.Context, key [32]byte, title, source string, scale float64) ([]byte, error) {
	if png, ok := s.pictures.get(key); ok {
		return png, nil
	}
	spec, err := chart.Parse([]byte(source))
	if err != nil {
		return nil, err
	}
	png, err := chart.RenderScaled(ctx, title, spec, scale)
	if err == nil {
		s.pictures.put(key, png)
	}
	return png, err
}

// drawDiagram is drawChart for a diagram.
func (s *shared) drawDiagram(ctx context.Context, account string, d diagram.Diagram) ([]byte, error) {
	key := pictureKey(account, "diagram", d.Source, d.Language, d.Theme, d.Aspect)
	if png, ok := s.pictures.get(key); ok {
		return png, nil
	}
	png, err := diagram.Render(ctx, d)
	if err == nil {
		s.pictures.put(key, png)
	}
	return png, err
}

// Bounds of a diagram drawn for a document, in pixels. A document shows
// a picture at 96 pixels an inch and no wider than its text (470 pt on
// A4, 627 pixels) nor taller than its page (1,000 pixels), so a larger
// picture is shrunk there anyway; at these bounds its size on the page is
// the same and what the reader sees is still 150 dpi or more.
const (
	embedDiagramWidth  = 1000
	embedDiagramHeight = 1500
)

// embedDiagram is embedChart for a diagram.
func (s *shared) embedDiagram(ctx context.Context, account string, d diagram.Diagram) ([]byte, error) {
	if png, ok := s.pictures.get(pictureKey(account, "diagram", d.Source, d.Language, d.Theme, d.Aspect)); ok {
		return png, nil
	}
	key := pictureKey(account, "embedded diagram", d.Source, d.Language, d.Theme, d.Aspect)
	if png, ok := s.pictures.get(key); ok {
		return png, nil
	}
	png, err := diagram.RenderFit(ctx, d, embedDiagramWidth, embedDiagramHeight)
	if err == nil {
		s.pictures.put(key, png)
	}
	return png, err
}
