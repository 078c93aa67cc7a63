package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// maxBodyBytes caps request bodies: the largest real one, a top-up or a
// label, is well under a kilobyte.
const maxBodyBytes = 16 << 10

// decode reads the request body into dst strictly: exactly one JSON
// object, no unknown fields, at most maxBodyBytes. An empty body is {}.
func (q *request) decode(dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, maxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest, "request_too_large",
			"The request body is over 16 KiB.")
	}
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return apierror.InvalidRequest("invalid_json", "The body is not a valid JSON object for this route: "+err.Error()+".")
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierror.InvalidRequest("invalid_json", "The body holds more than one JSON value.")
	}
	return nil
}

// reply writes v as JSON with status.
// answer fails with err, or replies v with status when err is nil.
func (q *request) answer(status int, v any, err error) {
	if err != nil {
		q.fail(err)
		return
	}
	q.reply(status, v)
}

func (q *request) reply(status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		q.fail(err)
		return
	}
	q.w.Header().Set("Content-Type", "application/json")
	q.w.WriteHeader(status)
	_, _ = q.w.Write(append(b, '\n'))
}

// list is the shape of every listing.
type list[T any] struct {
	Data []T `json:"data"`
}

func listOf[T any](items []T) list[T] {
	if items == nil {
		items = []T{}
	}
	return list[T]{Data: items}
}

// listEach is the listing of items, each in the JSON shape toJSON gives
// it.
func listEach[T, J any](items []T, toJSON func(T) J) list[J] {
	out := make([]J, 0, len(items))
	for _, it := range items {
		out = append(out, toJSON(it))
	}
	return list[J]{Data: out}
}
