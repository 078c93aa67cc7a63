package artifacts

import (
	"cmp"
	"context"
	"errors"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/switchyardhq/switchyard/internal/guard"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/diagram"
)

// renderer gives a document renderer the pictures it embeds.
type renderer struct {
	s    *shared
	env  *tools.Env
	call tools.Call
}

// element returns the PNG of the object id for embedding: a chart or
// diagram is drawn again from its source, a caller's image is taken as
// it came.
func (r *renderer) element(ctx context.Context, id string) ([]byte, string, error) {
	if el, ok := r.env.Renamed[id]; ok {
		// Folded into a document before: the element it became.
		id = el
	}
	if img, ok := r.env.Elements[id]; ok {
		b, err := img.Bytes()
		return b, "", err
	}
	ref, ok := r.env.Objects[id]
	if !ok || ref.Kind == tools.Tombstone {
		return nil, "", tools.Failf("the document embeds %s, which is not an object of this conversation; embeddable objects: %s",
			id, strings.Join(r.embeddable(), ", "))
	}
	switch ref.Kind {
	case "chart":
		png, err := r.s.embedChart(ctx, r.env.AccountID, ref.Title, ref.Source)
		if err != nil {
			return nil, "", sourceError(err)
		}
		// The chart draws its title itself; a caption would repeat it.
		return png, "", nil
	case "diagram":
		// The picture create_diagram drew, in its own theme and aspect:
		// the document places it at its proportions, and a dark diagram
		// stays dark on the white page.
		png, err := r.s.embedDiagram(ctx, r.env.AccountID, diagram.Diagram{Source: ref.Source, Language: diagram.LanguageDOT,
			Theme: orDefault(ref.Theme, render.ThemeLight), Aspect: orDefault(ref.Aspect, render.AspectLandscape)})
		if err != nil {
			return nil, "", sourceError(err)
		}
		return png, ref.Title, nil
	}
	return nil, "", tools.Failf("%s is a %s, which cannot be embedded in a document; embed charts, diagrams and images", id, ref.Kind)
}

// embeddable lists the ids a document may embed.
func (r *renderer) embeddable() []string {
	var ids []string
	for id, ref := range r.env.Objects {
		if ref.Kind == "chart" || ref.Kind == "diagram" || ref.Kind == "image" {
			ids = append(ids, id)
		}
	}
	for id := range r.env.Elements {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return []string{"none"}
	}
	return ids
}

// image is a document renderer's embeddable picture: pdf.Image and
// docx.Image are both this struct, so one walk of the Markdown serves both.
type image interface {
	~struct {
		PNG     []byte
		Caption string
	}
}

// embedPattern finds ![caption](ID) embeds of object ids; the renderers
// parse the Markdown properly, this only collects what they will ask for.
var embedPattern = regexp.MustCompile(`!\[[^\]]*\]\(\s*((?:obj|el)[1-9][0-9]*)\s*\)`)

// elements draws every object the Markdown embeds, as the renderer's
// image type. The pictures are drawn at once, up to one per CPU (at least
// two, since a diagram spends its layout waiting on the Graphviz worker),
// longest first (drawOrder): a report with three charts and a diagram
// spent three quarters of its time drawing them one after the other.
func elements[I image](ctx context.Context, r *renderer, markdown string) (map[string]I, error) {
	var ids []string
	for _, m := range embedPattern.FindAllStringSubmatch(markdown, -1) {
		if !slices.Contains(ids, m[1]) {
			ids = append(ids, m[1])
		}
	}
	type drawn struct {
		png     []byte
		caption string
		err     error
	}
	out := make([]drawn, len(ids))
	// The first failure stops the others: its error is the answer.
	drawCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int, len(ids))
	for _, i := range r.drawOrder(ids) {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(len(ids), max(2, runtime.GOMAXPROCS(0))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d := &out[i]
				if err := guard.Run("artifacts.element", func() { d.png, d.caption, d.err = r.element(drawCtx, ids[i]) }); err != nil {
					d.err = err
				}
				if d.err != nil {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	if err := firstError(ctx, out, func(d drawn) error { return d.err }); err != nil {
		return nil, err
	}
	images := make(map[string]I, len(ids))
	for i, id := range ids {
		images[id] = I{PNG: out[i].png, Caption: out[i].caption}
	}
	return images, nil
}

// drawOrder is the order in which the pictures of ids start drawing: the
// diagrams first, as they take longest (their layout waits on the
// Graphviz worker, then a larger picture is painted), then the charts,
// then what is only copied (a caller's image). Left to the scheduler, a
// diagram embedded after charts could wait for a slot behind them, and
// the document for it; longest first, the charts are drawn beside it.
// The order changes nothing in the output: each picture lands in its own
// place, and the error reported is still the first in document order.
func (r *renderer) drawOrder(ids []string) []int {
	rank := func(id string) int {
		if el, ok := r.env.Renamed[id]; ok {
			id = el
		}
		if _, ok := r.env.Elements[id]; ok {
			return 2
		}
		switch r.env.Objects[id].Kind {
		case "diagram":
			return 0
		case "chart":
			return 1
		}
		return 2
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rank(ids[a]), rank(ids[b])) })
	return order
}

// firstError is the error of the first picture, in the document's order,
// that failed by itself rather than because another one stopped it; when
// ctx itself ended, its error.
func firstError[T any](ctx context.Context, results []T, errOf func(T) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var stopped error
	for _, res := range results {
		err := errOf(res)
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			if stopped == nil {
				stopped = err
			}
		default:
			return err
		}
	}
	return stopped
}
