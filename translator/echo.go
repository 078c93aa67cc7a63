package translator

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"mime"
	"strings"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/tools"
)

// echoImages registers the images of the caller's newest message as
// elements (el<N>) and returns them as image artifacts (spec 2.6), which
// the stream sends once, before the answer: the client learns the ids the
// model may embed them by. Images of earlier messages were echoed by the
// request that first carried them. With file output off, or no id
// allocator, nothing is echoed.
func (t *turn) echoImages(ctx context.Context, files map[string]Attachment, images map[string]tools.Image) ([]wire.Artifact, error) {
	if !t.req.Files || t.o.cfg.IDs == nil {
		return nil, nil
	}
	last := -1
	for i, m := range t.req.Messages {
		if m.Role == request.RoleUser {
			last = i
		}
	}
	if last < 0 {
		return nil, nil
	}
	var out []wire.Artifact
	for _, p := range t.req.Messages[last].Parts {
		var img tools.Image
		title := fmt.Sprintf("Image %d", len(out)+1)
		switch {
		case p.Kind == request.PartImage:
			img = *p.Image
		case p.Kind == request.PartFile && files[p.FileID].Image != nil:
			a := files[p.FileID]
			img = images[p.FileID]
			if a.Name != "" {
				title = a.Name
			}
		default:
			continue
		}
		id, err := t.o.cfg.IDs.NextObjectID(ctx, t.caller.AccountID, objectid.Element)
		if err != nil {
			return nil, fmt.Errorf("registering an attached image: %w", err)
		}
		if t.env.Elements == nil {
			t.env.Elements = make(map[string]tools.Image)
		}
		t.env.Elements[id] = img
		a := wire.Artifact{
			Type:        "image",
			ObjectID:    id,
			Title:       title,
			MIMEType:    img.MIME,
			ImageBase64: img.Base64(),
		}
		if !t.req.Stream {
			a.FileID = t.storeImage(ctx, id, img)
		}
		out = append(out, a)
	}
	return out, nil
}

// echoNote tells the model the element ids of the caller's images.
func echoNote(echoed []wire.Artifact) string {
	if len(echoed) == 0 {
		return ""
	}
	ids := make([]string, len(echoed))
	for i, a := range echoed {
		ids[i] = fmt.Sprintf("%s (%s)", a.ObjectID, a.Title)
	}
	return "\n\nThe images in the user's latest message are registered as " + strings.Join(ids, ", ") +
		"; embed one in a document with ![caption](ID)."
}

// storeImage stores an echoed image for a non-streaming answer and
// returns its file id, or "" when it could not be stored: the artifact
// then keeps its bytes, as the spec asks when storing failed.
func (t *turn) storeImage(ctx context.Context, id string, img tools.Image) string {
	if t.o.cfg.Outputs == nil {
		return ""
	}
	ext := "png"
	if exts, _ := mime.ExtensionsByType(img.MIME); len(exts) > 0 {
		ext = strings.TrimPrefix(exts[0], ".")
	}
	data, err := img.Bytes() // an inline image is decoded only here
	var f storage.File
	if err == nil {
		f, err = t.o.cfg.Outputs.StoreGenerated(ctx, t.caller.AccountID, id+"."+ext, bytes.NewReader(data))
	}
	if err != nil {
		t.o.log.LogAttrs(ctx, slog.LevelWarn, "storing an echoed image; sent inline",
			slog.String("request_id", t.caller.RequestID), slog.Any("error", err))
		return ""
	}
	return f.ID
}
