package translator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
)

// openFiles reads every file referenced by an input_file part, once per
// file id.
func (t *turn) openFiles(ctx context.Context) (map[string]Attachment, error) {
	var opened map[string]Attachment
	for i, m := range t.req.Messages {
		for _, p := range m.Parts {
			if p.Kind != request.PartFile {
				continue
			}
			if _, ok := opened[p.FileID]; ok {
				continue
			}
			if t.o.cfg.Files == nil {
				return nil, apierror.InvalidRequest(CodeFileNotFound, fmt.Sprintf("messages[%d]: file attachments are not available on this server.", i))
			}
			a, err := t.o.cfg.Files.OpenFile(ctx, t.caller.AccountID, p.FileID)
			if err != nil {
				var ae *apierror.Error
				switch {
				case errors.As(err, &ae):
					return nil, ae
				case errors.Is(err, storage.ErrNotFound):
					// The Files API's answer for the same id: a file of another
					// account is indistinguishable from a missing one.
					return nil, apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, CodeFileNotFound,
						fmt.Sprintf("messages[%d]: file %q was not found.", i, clip.Ellipsis(p.FileID, 64)))
				}
				return nil, fmt.Errorf("opening file %s: %w", p.FileID, err)
			}
			if opened == nil {
				opened = make(map[string]Attachment)
			}
			opened[p.FileID] = a
		}
	}
	return opened, nil
}

// upstreamMessages converts the client's conversation into the backend's
// messages, after the service system prompt, whose text it leaves to
// upstream.NewConversationText. It also collects the images the caller
// attached, for tools that embed them; images holds those of uploaded
// files, by file id.
func (t *turn) upstreamMessages(files map[string]Attachment, images map[string]tools.Image) ([]upstream.Message, []tools.Image) {
	out := make([]upstream.Message, 1, 1+len(t.req.Messages))
	out[0] = upstream.Message{Role: "system"}
	var attached []tools.Image
	for _, m := range t.req.Messages {
		switch m.Role {
		case request.RoleSystem, request.RoleDeveloper:
			continue // folded into the system prompt
		case request.RoleAssistant:
			// Backends take plain text from the assistant.
			out = append(out, upstream.Message{Role: "assistant", Content: m.Text()})
			continue
		}
		if text, ok := allText(m.Parts); ok {
			out = append(out, upstream.Message{Role: "user", Content: text})
			continue
		}
		var parts []upstream.Part
		hasImage := false
		for _, p := range m.Parts {
			switch p.Kind {
			case request.PartText:
				parts = append(parts, upstream.Part{Type: "text", Text: p.Text})
			case request.PartImage:
				hasImage = true
				attached = append(attached, *p.Image)
				parts = append(parts, imagePart(*p.Image))
			case request.PartFile:
				a := files[p.FileID]
				switch {
				case a.Image != nil:
					hasImage = true
					img := images[p.FileID]
					attached = append(attached, img)
					parts = append(parts, imagePart(img))
				case a.Text != "":
					parts = append(parts, upstream.Part{Type: "text", Text: t.fileText(a)})
				default:
					parts = append(parts, upstream.Part{Type: "text",
						Text: fmt.Sprintf("[Attached file %q (%s): its content cannot be read.]", a.Name, a.MIME)})
				}
			}
		}
		if hasImage {
			out = append(out, upstream.Message{Role: "user", Parts: parts})
			continue
		}
		texts := make([]string, len(parts))
		for i, p := range parts {
			texts[i] = p.Text
		}
		out = append(out, upstream.Message{Role: "user", Content: strings.Join(texts, "\n\n")})
	}
	return out, attached
}

// allText returns the text of parts that are all text, as the backend
// reads it, and false when one is not: most messages are one text part,
// sent as it is, with nothing made on the way.
func allText(parts []request.Part) (string, bool) {
	for _, p := range parts {
		if p.Kind != request.PartText {
			return "", false
		}
	}
	if len(parts) == 1 {
		return parts[0].Text, true
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n\n"), true
}

// fileImages returns the images among the opened files, by file id, each
// encoded once for the backend and the echo alike.
func fileImages(files map[string]Attachment) map[string]tools.Image {
	var out map[string]tools.Image
	for id, a := range files {
		if a.Image == nil {
			continue
		}
		if out == nil {
			out = make(map[string]tools.Image)
		}
		out[id] = tools.ImageOf(http.DetectContentType(a.Image), a.Image)
	}
	return out
}

// fileText frames the extracted text of an attached file, cut to the
// configured size so that one large file cannot crowd out the rest.
func (t *turn) fileText(a Attachment) string {
	text := a.Text
	note := ""
	if max := t.o.maxAttachmentChars(); utf8.RuneCountInString(text) > max {
		text = clip.Runes(text, max)
		note = fmt.Sprintf("\n[The file continues; only its first %d characters are shown.]", max)
	}
	return fmt.Sprintf("[Attached file %q]\n%s%s\n[End of file %q]", a.Name, text, note, a.Name)
}

// imagePart is img as a data URL: its base64 as it came, or as it was
// encoded once, written into the body by upstream.Conversation.
func imagePart(img tools.Image) upstream.Part {
	return upstream.Part{Type: "image_url", ImageURL: &upstream.ImageURL{MIME: img.MIME, Base64: img.Base64()}}
}

// clientInstructions returns the text of the client's system and
// developer messages.
func clientInstructions(msgs []request.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.IsSystem() {
			if s := strings.TrimSpace(m.Text()); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
