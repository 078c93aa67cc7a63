package artifacts

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/chart"
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
		spec, err := chart.Parse([]byte(ref.Source))
		if err != nil {
			return nil, "", sourceError(err)
		}
		png, err := chart.Render(ctx, ref.Title, spec)
		// The chart draws its title itself; a caption would repeat it.
		return png, "", err
	case "diagram":
		png, err := diagram.Render(ctx, diagram.Diagram{Source: ref.Source, Language: diagram.LanguageDOT,
			Theme: render.ThemeLight, Aspect: render.AspectLandscape})
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
// image type.
func elements[I image](ctx context.Context, r *renderer, markdown string) (map[string]I, error) {
	out := make(map[string]I)
	for _, m := range embedPattern.FindAllStringSubmatch(markdown, -1) {
		id := m[1]
		if _, done := out[id]; done {
			continue
		}
		png, caption, err := r.element(ctx, id)
		if err != nil {
			return nil, err
		}
		out[id] = I{PNG: png, Caption: caption}
	}
	return out, nil
}
