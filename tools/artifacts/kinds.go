package artifacts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/chart"
	"github.com/switchyardhq/switchyard/tools/render/diagram"
	"github.com/switchyardhq/switchyard/tools/render/docx"
	"github.com/switchyardhq/switchyard/tools/render/pdf"
	"github.com/switchyardhq/switchyard/tools/render/xlsx"
)

// kinds lists the deliverables, in the order their tools are offered.
var kinds = []*kind{documentKind, wordKind, spreadsheetKind, chartKind, diagramKind}

func kindOf(typ string) *kind {
	for _, k := range kinds {
		if k.typ == typ {
			return k
		}
	}
	return nil
}

var chartKind = &kind{
	tool: tools.NameCreateChart, typ: "chart", ext: "png", mime: "image/png", image: true,
	description: "Draw a chart (bar, stacked bar, line, area, scatter or pie) as a PNG image from a JSON spec. " +
		"Use it for numbers the user wants to see; it can then be embedded in a document by its id.",
	source: func(args json.RawMessage) (string, source, error) {
		var a struct {
			titled
			Spec json.RawMessage `json:"spec"`
		}
		title, err := decodeTitled(args, &a)
		if err != nil {
			return "", source{}, err
		}
		spec, err := chartSource(a.Spec)
		return title, spec, err
	},
	update: func(old source, args json.RawMessage) (source, error) {
		var a struct {
			Spec json.RawMessage `json:"spec"`
		}
		_ = json.Unmarshal(args, &a)
		if len(a.Spec) == 0 {
			return old, nil
		}
		return chartSource(a.Spec)
	},
	render: func(ctx context.Context, r *renderer, title string, src source) (rendered, error) {
		png, err := r.s.drawChart(ctx, r.env.AccountID, title, src.Text)
		return rendered{data: png}, err
	},
}

// chartSource checks a chart spec and returns it as compact JSON text,
// the artifact's source.
func chartSource(raw json.RawMessage) (source, error) {
	if len(raw) == 0 {
		return source{}, tools.Failf("spec is required")
	}
	if _, err := chart.Parse(raw); err != nil {
		return source{}, sourceError(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return source{}, errors.Join(tools.Failf("spec is not valid JSON"), err)
	}
	return source{Text: b.String()}, nil
}

var spreadsheetKind = &kind{
	tool: tools.NameCreateSpreadsheet, typ: "xlsx", ext: "xlsx",
	mime: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	description: "Make an Excel workbook (xlsx). Each sheet is a table whose first row is its header; " +
		"cells are numbers, booleans, text, ISO dates, percentages like \"12%\", amounts like \"$1,200\" or formulas starting with \"=\".",
	source: func(args json.RawMessage) (string, source, error) {
		wb, err := xlsx.Parse(args)
		if err != nil {
			return "", source{}, sourceError(err)
		}
		title, err := requireTitle(wb.Title)
		if err != nil {
			return "", source{}, err
		}
		return title, sheetsSource(&wb), nil
	},
	update: func(old source, args json.RawMessage) (source, error) {
		var a struct {
			Sheets json.RawMessage `json:"sheets"`
		}
		_ = json.Unmarshal(args, &a)
		if len(a.Sheets) == 0 {
			return old, nil
		}
		wb, err := xlsx.Parse([]byte(`{"title":"x","sheets":` + string(a.Sheets) + `}`))
		if err != nil {
			return source{}, sourceError(err)
		}
		return sheetsSource(&wb), nil
	},
	render: func(ctx context.Context, r *renderer, title string, src source) (rendered, error) {
		var wb xlsx.Workbook
		if src.workbook != nil {
			wb = *src.workbook
			wb.Title = title
		} else {
			var err error
			wb, err = xlsx.Parse([]byte(`{"title":` + mustQuote(title) + `,"sheets":` + src.Text + `}`))
			if err != nil {
				return rendered{}, err
			}
		}
		wb.Time = r.s.cfg.Now().UTC()
		data, err := xlsx.Render(ctx, wb)
		return rendered{data: data}, err
	},
}

// sheetsSource is a workbook's sheets as compact JSON, the artifact's
// source, and the workbook itself for rendering. The cells are written
// as they came: each is one JSON scalar, without inner white space, which
// is much faster than having encoding/json check and compact them all
// again.
func sheetsSource(wb *xlsx.Workbook) source {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range wb.Sheets {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(s.Name)
		b.WriteString(`{"name":`)
		b.Write(name)
		b.WriteString(`,"rows":[`)
		for r, row := range s.Rows {
			if r > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			for c, raw := range row {
				if c > 0 {
					b.WriteByte(',')
				}
				raw = bytes.TrimSpace(raw)
				if len(raw) == 0 {
					raw = json.RawMessage("null")
				}
				b.Write(raw)
			}
			b.WriteByte(']')
		}
		b.WriteString(`]}`)
	}
	b.WriteByte(']')
	return source{Text: b.String(), workbook: wb}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// embedHint ends the descriptions of the document tools, whose Markdown
// may embed the images the other tools made.
const embedHint = "Embed a chart, diagram or image made earlier with ![caption](ID) using its object id."

var documentKind = &kind{
	tool: tools.NameCreateDocument, typ: "document", ext: "pdf", mime: "application/pdf",
	description: "Write a PDF document (report, memo, summary) from Markdown: headings, lists, tables, code, links. " +
		embedHint,
	source: markdownSource,
	update: markdownUpdate,
	render: func(ctx context.Context, r *renderer, title string, src source) (rendered, error) {
		images, err := elements[pdf.Image](ctx, r, src.Text)
		if err != nil {
			return rendered{}, err
		}
		doc := pdf.Document{Title: title, Markdown: src.Text, Created: r.s.cfg.Now(), PageSize: pdf.A4, Elements: images}
		if strings.EqualFold(r.s.cfg.Paper, "letter") {
			doc.PageSize = pdf.Letter
		}
		out, err := pdf.Render(ctx, doc)
		return rendered{data: out.PDF, embedded: out.Embedded}, err
	},
}

// markdownSource reads {title, markdown}, the arguments of the document
// tools.
func markdownSource(args json.RawMessage) (string, source, error) {
	var a struct {
		titled
		Markdown string `json:"markdown"`
	}
	title, err := decodeTitled(args, &a)
	if err != nil {
		return "", source{}, err
	}
	if strings.TrimSpace(a.Markdown) == "" {
		return "", source{}, tools.Failf("markdown is required")
	}
	return title, source{Text: a.Markdown}, nil
}

func markdownUpdate(old source, args json.RawMessage) (source, error) {
	var a struct {
		Markdown string `json:"markdown"`
	}
	_ = json.Unmarshal(args, &a)
	if strings.TrimSpace(a.Markdown) == "" {
		return old, nil
	}
	return source{Text: a.Markdown}, nil
}

var wordKind = &kind{
	tool: tools.NameCreateWordDocument, typ: "docx", ext: "docx",
	mime: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	description: "Write a Word document (docx) from Markdown, for text the user will edit further. " +
		embedHint,
	source: markdownSource,
	update: markdownUpdate,
	render: func(ctx context.Context, r *renderer, title string, src source) (rendered, error) {
		images, err := elements[docx.Image](ctx, r, src.Text)
		if err != nil {
			return rendered{}, err
		}
		out, err := docx.Render(ctx, docx.Document{Title: title, Markdown: src.Text, Created: r.s.cfg.Now(), Elements: images})
		return rendered{data: out.DOCX, embedded: out.Embedded}, err
	},
}

var diagramKind = &kind{
	tool: tools.NameCreateDiagram, typ: "diagram", ext: "png", mime: "image/png", image: true,
	description: "Draw a diagram (flowchart, architecture, process, org chart) from Graphviz DOT, laid out by Graphviz. " +
		"It can then be embedded in a document by its id.",
	source: func(args json.RawMessage) (string, source, error) {
		var a struct {
			titled
			Source   string `json:"source"`
			Language string `json:"language"`
			Theme    string `json:"theme"`
			Aspect   string `json:"aspect"`
		}
		title, err := decodeTitled(args, &a)
		if err != nil {
			return "", source{}, err
		}
		if a.Language != "" && a.Language != diagram.LanguageDOT {
			return "", source{}, tools.Failf("language %q is not supported; use dot", a.Language)
		}
		if strings.TrimSpace(a.Source) == "" {
			return "", source{}, tools.Failf("source is required")
		}
		return title, source{Text: a.Source, Theme: orDefault(a.Theme, render.ThemeLight), Aspect: orDefault(a.Aspect, render.AspectLandscape)}, nil
	},
	update: func(old source, args json.RawMessage) (source, error) {
		var a struct {
			Source string `json:"source"`
		}
		_ = json.Unmarshal(args, &a)
		if strings.TrimSpace(a.Source) != "" {
			old.Text = a.Source
		}
		old.Theme = orDefault(old.Theme, render.ThemeLight)
		old.Aspect = orDefault(old.Aspect, render.AspectLandscape)
		return old, nil
	},
	render: func(ctx context.Context, r *renderer, _ string, src source) (rendered, error) {
		png, err := r.s.drawDiagram(ctx, r.env.AccountID, diagram.Diagram{Source: src.Text, Language: diagram.LanguageDOT, Theme: src.Theme, Aspect: src.Aspect})
		return rendered{data: png}, err
	},
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
