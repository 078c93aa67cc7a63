package docx

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/markdown"
)

// Limits on what Render accepts. They keep one call bounded in memory and
// time whatever the model writes.
const (
	// MaxMarkdownBytes is the largest Markdown source Render accepts.
	MaxMarkdownBytes = 1 << 20
	// MaxImageBytes is the largest single image Render embeds.
	MaxImageBytes = 20 << 20
	// MaxImagePixels bounds an embedded image's width times height, as
	// read from its header.
	MaxImagePixels = 50_000_000
	// MaxMediaBytes bounds the images of one document together.
	MaxMediaBytes = 64 << 20
)

// Document is what Render turns into a .docx file.
type Document struct {
	// Title is shown in the Title style at the top of the document and
	// stored as the document's title property. If the Markdown starts with
	// a level-1 heading of the same text, that heading is not repeated.
	// Empty: no title paragraph, and the first level-1 heading, if any,
	// becomes the title property.
	Title string

	// Markdown is the body. Images whose destination is an object id
	// (![Revenue](obj3)) are taken from Elements; other image
	// destinations are never fetched and render as their alt text.
	Markdown string

	// Elements are the images the Markdown may embed, keyed by object id
	// ("obj3", "el2"). Nil: nothing can be embedded.
	Elements map[string]Image

	// Created is stored as the document's creation and modification time
	// and as the date of every zip entry. Zero: 1980-01-01 00:00 UTC, the
	// earliest date a zip entry can carry, so output stays deterministic.
	Created time.Time
}

// Image is a picture a document can embed.
type Image struct {
	// PNG is the encoded image. PNG is expected; JPEG is accepted too and
	// stored as such.
	PNG []byte

	// Caption is shown under the image when the Markdown gives no alt
	// text (![](obj3)). Empty: no caption in that case.
	Caption string
}

// Result is a rendered document.
type Result struct {
	// DOCX is the file.
	DOCX []byte

	// Embedded lists the object ids the document embeds, in order of
	// first use, each once.
	Embedded []string
}

// epoch stands in for a zero Document.Created: zip's DOS dates cannot go
// earlier.
var epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// Render builds the .docx file for d. Problems with the source the model
// wrote (Markdown too long, an embed id that names no known object, an
// image too large) are returned as *render.SourceError; other errors
// concern the caller's data or ctx. ctx is checked between blocks.
func Render(ctx context.Context, d Document) (Result, error) {
	if len(d.Markdown) > MaxMarkdownBytes {
		return Result{}, render.Errorf("the markdown is %d bytes long; the limit is %d bytes", len(d.Markdown), MaxMarkdownBytes)
	}
	src := []byte(d.Markdown)
	if err := checkNesting(src); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	c := newConverter(ctx, src, d)
	if err := c.document(markdown.Parse(src)); err != nil {
		return Result{}, err
	}
	created := d.Created
	if created.IsZero() {
		created = epoch
	}
	var buf bytes.Buffer
	if err := writePackage(&buf, c, created.UTC()); err != nil {
		return Result{}, fmt.Errorf("writing docx: %w", err)
	}
	return Result{DOCX: buf.Bytes(), Embedded: c.media.embedded}, nil
}
