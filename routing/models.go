package routing

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
)

// ModelNotFound is the answer to a request for a model not configured,
// in OpenAI's words and code.
func ModelNotFound(model string) *apierror.Error {
	return apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "model_not_found",
		"The model '"+clip.Ellipsis(model, 80)+"' does not exist.")
}

// ModelObject is a model in OpenAI's shape.
type ModelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelObjectOf is the model name, listed as created at Unix time created.
func ModelObjectOf(name string, created int64) ModelObject {
	return ModelObject{ID: name, Object: "model", Created: created, OwnedBy: "switchyard"}
}

// WriteModelList writes the models in OpenAI's list shape.
func WriteModelList(w http.ResponseWriter, names []string, created int64) {
	data := make([]ModelObject, len(names))
	for i, n := range names {
		data[i] = ModelObjectOf(n, created)
	}
	WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// WriteJSON writes v as a JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// ServeGet answers a GET of rest, a path below the /v1 prefix, from the
// models of t, listed as created at created: the list, one model, or a
// refusal, since a route without a body names no model to pick a pool by.
func ServeGet[P Named](w http.ResponseWriter, rest string, t *Table[P], created int64) {
	name, one := strings.CutPrefix(rest, "/models/")
	switch {
	case rest == "/models":
		WriteModelList(w, t.Names(), created)
	case one && t.Has(name):
		WriteJSON(w, http.StatusOK, ModelObjectOf(name, created))
	case one:
		apierror.Write(w, ModelNotFound(name))
	default:
		apierror.Write(w, apierror.New(http.StatusBadRequest, apierror.TypeInvalidRequest, "invalid_request",
			"This route cannot be served: the gateway picks a backend by the request's model."))
	}
}
