package request

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/clip"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/tools"
)

func parseObjects(v rawJSON, max int) (map[string]tools.ObjectRef, error) {
	if len(v) == 0 || isNull(v) {
		return nil, nil
	}
	raw, ok := splitObject(v)
	if !ok {
		return nil, invalid(CodeInvalidObjects, "objects must be an object mapping object ids to {kind, source, title}.")
	}
	ids := raw.keys()
	if len(ids) > max {
		return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects holds %d entries; at most %d are accepted.", len(ids), max))
	}
	sort.Strings(ids)
	out := make(map[string]tools.ObjectRef, len(ids))
	for _, id := range ids {
		if _, _, ok := objectid.Parse(id); !ok {
			return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects: %q is not an object id (obj<N> or el<N>).", clip.Ellipsis(id, 40)))
		}
		var e struct {
			Kind   *string `json:"kind"`
			Source *string `json:"source"`
			Title  *string `json:"title"`
			// A diagram's artifact carries its theme and aspect beside
			// the source; a client that echoes them keeps an embedded
			// or edited diagram in them.
			Theme  *string `json:"theme"`
			Aspect *string `json:"aspect"`
		}
		if err := json.Unmarshal(field(raw, id), &e); err != nil {
			return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects.%s must be an object {kind, source, title} of strings.", id))
		}
		if e.Kind == nil || !knownKinds[*e.Kind] {
			return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects.%s.kind must be one of document, xlsx, docx, diagram, chart, image or tombstone.", id))
		}
		ref := tools.ObjectRef{Kind: *e.Kind}
		if ref.Kind != tools.Tombstone {
			ref.Source, ref.Title = deref(e.Source), deref(e.Title)
			if utf8.RuneCountInString(ref.Source) > maxObjectSourceChars {
				return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects.%s.source is longer than %d characters.", id, maxObjectSourceChars))
			}
		}
		if ref.Kind == "diagram" {
			ref.Theme, ref.Aspect = deref(e.Theme), deref(e.Aspect)
			if ref.Theme != "" && ref.Theme != "light" && ref.Theme != "dark" {
				return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects.%s.theme must be light or dark.", id))
			}
			if ref.Aspect != "" && ref.Aspect != "landscape" && ref.Aspect != "portrait" && ref.Aspect != "square" {
				return nil, invalid(CodeInvalidObjects, fmt.Sprintf("objects.%s.aspect must be landscape, portrait or square.", id))
			}
		}
		out[id] = ref
	}
	return out, nil
}

// knownKinds are the artifact types a client may echo, and the tombstone.
var knownKinds = map[string]bool{
	"document": true, "xlsx": true, "docx": true, "diagram": true, "chart": true, "image": true,
	tools.Tombstone: true,
}
