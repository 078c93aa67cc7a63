package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

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
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && jsonField(typ.Field) == "expires_at" {
			// The one time a body takes, a key's expiry, refused with
			// the code of the key's other controls.
			return apierror.InvalidRequest("invalid_key_controls", decodeMessage(err))
		}
		return apierror.InvalidRequest("invalid_json", decodeMessage(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierror.InvalidRequest("invalid_json", "The body holds more than one JSON value.")
	}
	return nil
}

// decodeMessage says what is wrong with a body in the API's words, not
// encoding/json's, which name Go types and struct fields.
func decodeMessage(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("The body is not valid JSON (at byte %d).", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "The body ends before its JSON object does."
	case errors.As(err, &typ) && strings.HasSuffix(typ.Field, "_at"):
		// A time given as text, as the admin API took times before
		// (RFC 3339): say what it takes now.
		return strings.TrimSuffix(timeMessage(jsonField(typ.Field)), ".") + "; not " + article(typ.Value) + "."
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%s must be %s, not %s.", jsonField(typ.Field), jsonKind(typ.Type), article(typ.Value))
	case errors.As(err, &typ):
		return "The body must be a JSON object, not " + article(typ.Value) + "."
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "This route takes no member " + name + "."
	}
	return "The body is not a valid JSON object for this route."
}

// jsonField is encoding/json's path of a member as the body spells it:
// without the names of embedded Go structs (KeyControlsJSON.models),
// which the body never holds. The API's members are lower case.
func jsonField(path string) string {
	parts := strings.Split(path, ".")
	kept := parts[:0]
	for _, p := range parts {
		if p != "" && !(p[0] >= 'A' && p[0] <= 'Z') {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}

// jsonKind names the JSON value a Go type is read from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// article puts "a" or "an" before encoding/json's name of a JSON value
// ("number", "string", "array", "object", "bool").
func article(v string) string {
	switch v {
	case "bool":
		return "true or false"
	case "array", "object":
		return "an " + v
	}
	if strings.HasPrefix(v, "number") {
		return "a number"
	}
	return "a " + v
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

// page is the shape of every paged listing: the list object of the
// /v3 Files API (docs/files.md), so that one client loop pages through
// both APIs: ask again with after set to last_id while has_more is true.
type page[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
	// FirstID and LastID are the cursors of the page's ends; null for an
	// empty page, as the Files API writes them.
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
}

// pageEach is the page of items, each in the JSON shape toJSON gives it,
// with cursor naming the item as after takes it.
func pageEach[T, J any](items []T, more bool, toJSON func(T) J, cursor func(T) string) page[J] {
	out := page[J]{Object: "list", Data: make([]J, 0, len(items)), HasMore: more}
	for _, it := range items {
		out.Data = append(out.Data, toJSON(it))
	}
	if n := len(items); n > 0 {
		first, last := cursor(items[0]), cursor(items[n-1])
		out.FirstID, out.LastID = &first, &last
	}
	return out
}
