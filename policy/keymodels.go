package policy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
)

// maxModelList bounds the model list a key's allow-list is applied to.
// The list is held whole to be filtered; an upstream listing more than
// this is answered with 502 rather than shown unfiltered.
const maxModelList = 4 << 20

// ModelView applies the model allow-list of p, the principal that
// authenticated r (the zero Principal for none), to the model routes
// below prefix ("/v1", "/v3"): a key limited to some models sees only
// those, whoever writes the answer (the upstream, a model pool, the
// gateway itself).
//
// On GET prefix/models the returned writer holds a 200 answer back, drops
// every entry of its data array whose id the key may not use, and writes
// the rest when done is called, which the caller defers. GET or HEAD of
// prefix/models/{id} for a model outside the list is refused with the
// answer for an unknown model (404 model_not_found), before anything is
// asked upstream. Any other request, and a key without a model
// allow-list, gets w back unchanged and a done that does nothing.
//
// A list that cannot be read (not JSON, compressed, over maxModelList)
// is answered with 502 upstream_unavailable: a key's allow-list fails
// closed.
func ModelView(w http.ResponseWriter, r *http.Request, prefix string, p Principal) (_ http.ResponseWriter, done func(), _ error) {
	nothing := func() {}
	if len(p.Controls.Models) == 0 || !strings.HasPrefix(r.URL.Path, prefix+"/models") {
		return w, nothing, nil
	}
	rest := r.URL.Path[len(prefix)+len("/models"):]
	switch {
	case rest == "" && r.Method == http.MethodGet:
		// The list is parsed here, so it must come as JSON text: without
		// the client's Accept-Encoding the upstream sends it plain (or Go's
		// transport undoes its own gzip).
		r.Header.Del("Accept-Encoding")
		f := &modelListWriter{w: w, allow: p.Controls.Models}
		return f, f.finish, nil
	case strings.HasPrefix(rest, "/") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		if id := rest[1:]; !slices.Contains(p.Controls.Models, id) {
			return w, nothing, modelNotListed(id)
		}
	}
	return w, nothing, nil
}

// modelNotListed is the answer for a model the key may not see, the same
// as for a model the gateway does not serve, so that a key's list does
// not tell which others exist.
func modelNotListed(model string) *apierror.Error {
	return apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "model_not_found",
		"The model '"+clip.Ellipsis(model, 80)+"' does not exist.")
}

// modelListWriter holds back a 200 model list and writes it filtered by
// finish; any other status passes straight through. It is created per
// request and is not safe for concurrent use.
//
// Write is its only body path (no ReadFrom), and its flushes are no-ops
// until finish: a flush would send the headers of a body not yet
// filtered.
type modelListWriter struct {
	w       http.ResponseWriter
	allow   []string
	status  int // 0 until WriteHeader (or Write) with a final status
	held    bool
	buf     bytes.Buffer
	tooLong bool
}

func (f *modelListWriter) Header() http.Header { return f.w.Header() }

func (f *modelListWriter) WriteHeader(status int) {
	if f.status != 0 {
		return
	}
	if status >= 100 && status < 200 {
		// 1xx answers (103 Early Hints) are interim: they go out as
		// they come and the final status is still to follow.
		f.w.WriteHeader(status)
		return
	}
	f.status = status
	f.held = status == http.StatusOK
	if !f.held {
		f.w.WriteHeader(status)
	}
}

func (f *modelListWriter) Write(b []byte) (int, error) {
	if f.status == 0 {
		f.WriteHeader(http.StatusOK)
	}
	if !f.held {
		return f.w.Write(b)
	}
	if f.buf.Len()+len(b) > maxModelList {
		f.tooLong = true
		return len(b), nil
	}
	return f.buf.Write(b)
}

// FlushError keeps http.ResponseController from flushing the writers
// below while the list is held; a passed-through answer is flushed.
func (f *modelListWriter) FlushError() error {
	if f.held {
		return nil
	}
	return http.NewResponseController(f.w).Flush()
}

// Unwrap lets apierror.Write and http.ResponseController reach the
// writers below.
func (f *modelListWriter) Unwrap() http.ResponseWriter { return f.w }

// finish writes the held list, filtered, or 502 if it cannot be read.
func (f *modelListWriter) finish() {
	if !f.held {
		return
	}
	f.held = false
	h := f.w.Header()
	var out []byte
	var ok bool
	if enc := h.Get("Content-Encoding"); !f.tooLong && (enc == "" || strings.EqualFold(enc, "identity")) {
		out, ok = filterModelList(f.buf.Bytes(), f.allow)
	}
	if !ok {
		h.Del("Content-Encoding")
		apierror.Write(f.w, apierror.New(http.StatusBadGateway, apierror.TypeServer, "upstream_unavailable",
			"The model backend's list of models could not be read. Retry with backoff."))
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	f.w.WriteHeader(http.StatusOK)
	_, _ = f.w.Write(out)
}

// filterModelList keeps, of an OpenAI model list ({"object": "list",
// "data": [{"id": ...}, ...]}), the entries whose id is in allow, in
// their order, and every other field of the list as it was. ok is false
// for anything else, including a list without a data array.
func filterModelList(body []byte, allow []string) (_ []byte, ok bool) {
	var list map[string]json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, false
	}
	var data []json.RawMessage
	if raw, found := list["data"]; !found || json.Unmarshal(raw, &data) != nil || data == nil {
		return nil, false
	}
	kept := make([]json.RawMessage, 0, len(allow))
	for _, m := range data {
		var entry struct {
			ID *string `json:"id"`
		}
		if json.Unmarshal(m, &entry) != nil || entry.ID == nil {
			return nil, false
		}
		if slices.Contains(allow, *entry.ID) {
			kept = append(kept, m)
		}
	}
	list["data"], _ = json.Marshal(kept)
	out, err := json.Marshal(list)
	return out, err == nil
}
