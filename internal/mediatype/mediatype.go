// Package mediatype reads the media type of a Content-Type header on the
// request path, where mime.ParseMediaType would build a map of parameters
// that nobody reads, and decides which request bodies the gateway reads
// as what.
package mediatype

import "strings"

// Of returns the media type of contentType in lower case, its parameters
// dropped: "text/event-stream" for "Text/Event-Stream; charset=utf-8".
// Unlike mime.ParseMediaType it does not check the parameters, so a
// header with malformed ones still tells its type; callers that branch on
// it (an event stream is metered as one) must not be talked out of the
// branch by a broken parameter. Whether a request body is accepted is
// IsJSON's and IsFormData's question, not this one's.
func Of(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.ToLower(strings.TrimSpace(contentType))
}

// IsJSON reports whether a request labelled contentType is JSON that the
// gateway reads as the backend will: "application/json", in any letter
// case, with no parameter or with charset=utf-8 alone (any case, quoted
// or not). Everything else is refused: another charset (a backend that
// honours it would read other text than the meter), any other parameter
// (a backend may give it a meaning), a malformed one, and a missing
// Content-Type (a backend may guess).
func IsJSON(contentType string) bool {
	typ, params, _ := strings.Cut(contentType, ";")
	if !strings.EqualFold(strings.TrimSpace(typ), "application/json") {
		return false
	}
	if !strings.Contains(contentType, ";") {
		return true
	}
	name, value, ok := strings.Cut(strings.TrimSpace(params), "=")
	if !ok || !strings.EqualFold(strings.TrimRight(name, " \t"), "charset") {
		return false
	}
	value = strings.TrimLeft(value, " \t")
	if unq, ok := strings.CutPrefix(value, `"`); ok {
		value, ok = strings.CutSuffix(unq, `"`)
		if !ok {
			return false
		}
	}
	return strings.EqualFold(value, "utf-8")
}

// IsFormData reports whether contentType is multipart/form-data, the
// one multipart type with a reader in the gateway (the Files API's
// upload). Its parameters (the boundary) are the reader's to check.
func IsFormData(contentType string) bool {
	return Of(contentType) == "multipart/form-data"
}
