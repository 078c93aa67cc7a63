package pdf

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"time"
	"unicode"

	"github.com/switchyardhq/switchyard/tools/render"
	"github.com/switchyardhq/switchyard/tools/render/markdown"
)

// Bounds on what one Render call accepts.
const (
	// MaxMarkdownBytes is the largest Markdown source Render accepts.
	MaxMarkdownBytes = 1 << 20
	// MaxPages is the most pages a document may have.
	MaxPages = 300
	// MaxImagePixels is the largest image (width × height) Render decodes.
	MaxImagePixels = 40_000_000
)

// PageSize is the paper size of a Document. The zero value is A4.
type PageSize int

const (
	// A4 is 210 × 297 mm, the default.
	A4 PageSize = iota
	// Letter is US Letter, 8.5 × 11 in.
	Letter
)

// String returns "A4" or "Letter".
func (s PageSize) String() string {
	if s == Letter {
		return "Letter"
	}
	return "A4"
}

// Document is what Render turns into a PDF.
type Document struct {
	// Title opens the first page and is the PDF's title metadata. It may
	// be empty.
	Title string

	// Markdown is the body, at most MaxMarkdownBytes.
	Markdown string

	// Elements are the images the Markdown may embed with ![caption](id),
	// keyed by object id ("obj3", "el2"). Nil means none.
	Elements map[string]Image

	// PageSize is the paper size. Default: A4.
	PageSize PageSize

	// Created is the document's date: shown in the title block and stored
	// as its creation and modification date. The zero value shows no date
	// and stores a fixed date (2000-01-01 UTC), so that the same Document
	// always renders the same bytes.
	Created time.Time

	// Lang is the natural language of the text as a BCP 47 tag ("en",
	// "de-CH", "zh-Hans"), which screen readers pick their voice by. When
	// it is empty or malformed, the script most of the letters are in
	// decides where it names one language well enough (Japanese kana,
	// Hangul, Han, Hebrew, Arabic, Thai, Greek, Devanagari); otherwise
	// "en".
	Lang string
}

// lang is d.Lang when it is a well-formed tag, else a guess from the
// text.
func (d Document) lang() string {
	if langTag.MatchString(d.Lang) {
		return d.Lang
	}
	return guessLang(d.Title + "\n" + d.Markdown)
}

// scriptLangs are the scripts guessLang knows, each with its language.
var scriptLangs = []struct {
	table *unicode.RangeTable
	lang  string
}{
	{unicode.Hiragana, "ja"}, {unicode.Katakana, "ja"}, {unicode.Hangul, "ko"},
	{unicode.Han, "zh"}, {unicode.Hebrew, "he"}, {unicode.Arabic, "ar"},
	{unicode.Thai, "th"}, {unicode.Greek, "el"}, {unicode.Devanagari, "hi"},
}

// guessLang names the language of the script most of text's letters are
// in. Japanese mixes Han with kana, so any kana among the Han makes it
// Japanese.
func guessLang(text string) string {
	counts := make([]int, len(scriptLangs))
	letters := 0
	for i, r := range text {
		if i >= 64<<10 {
			break // the first 64 KB say enough
		}
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if r < 0x370 {
			continue // Latin
		}
		for j, s := range scriptLangs {
			if unicode.Is(s.table, r) {
				counts[j]++
				break
			}
		}
	}
	byLang := map[string]int{}
	for j, s := range scriptLangs {
		byLang[s.lang] += counts[j]
	}
	if byLang["ja"] > 0 && byLang["ja"]+byLang["zh"] > letters/2 {
		return "ja"
	}
	for _, s := range scriptLangs {
		if byLang[s.lang] > letters/2 {
			return s.lang
		}
	}
	return "en"
}

var langTag = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`)

// Image is an embeddable picture, usually a chart or diagram rendered
// earlier in the conversation.
type Image struct {
	// PNG is the encoded picture. PNG is expected; JPEG and GIF are
	// accepted too.
	PNG []byte

	// Caption is shown under the image when the Markdown gives none (the
	// Markdown's ![caption](id) wins when it is not empty).
	Caption string
}

// Result is a rendered document.
type Result struct {
	// PDF is the file.
	PDF []byte
	// Embedded lists the object ids of Document.Elements the document
	// shows, in order of first use, each once.
	Embedded []string
	// Pages is the number of pages.
	Pages int
}

// fixedDate is the metadata date of a Document without Created.
var fixedDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Render lays d out and returns the PDF. Problems with the Markdown or its
// embeds (an unknown id, an undecodable image, a document over the limits)
// are *render.SourceError values written for the author of the Markdown;
// other errors are internal. Render returns ctx.Err() when ctx ends first.
func Render(ctx context.Context, d Document) (Result, error) {
	if len(d.Markdown) > MaxMarkdownBytes {
		return Result{}, render.Errorf("the Markdown is %d bytes; the limit is %d bytes (1 MB)", len(d.Markdown), MaxMarkdownBytes)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	src := []byte(d.Markdown)
	tree := markdown.Parse(src)

	r := newRenderer(ctx, d, src)
	if err := r.run(tree); err != nil {
		return Result{}, err
	}
	var buf bytes.Buffer
	buf.Grow(64 << 10)
	if err := r.pdf.Output(&buf); err != nil {
		return Result{}, fmt.Errorf("writing pdf: %w", err)
	}
	out, err := addStructure(buf.Bytes(), r.tags)
	if err != nil {
		return Result{}, fmt.Errorf("tagging pdf: %w", err)
	}
	return Result{PDF: out, Embedded: r.embedded, Pages: r.pdf.PageCount()}, nil
}

// errTooLong stops a layout that passes MaxPages.
var errTooLong = render.Errorf("the document would be longer than %d pages; shorten it or split it into several documents", MaxPages)
