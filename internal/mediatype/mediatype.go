// Package mediatype reads the media type of a Content-Type header on the
// request path, where mime.ParseMediaType would build a map of parameters
// that nobody reads.
package mediatype

import "strings"

// Of returns the media type of contentType in lower case, its parameters
// dropped: "text/event-stream" for "Text/Event-Stream; charset=utf-8".
// Unlike mime.ParseMediaType it does not check the parameters, so a
// header with malformed ones still tells its type; callers that branch on
// it (an event stream is metered as one, a multipart body is not probed)
// must not be talked out of the branch by a broken parameter.
func Of(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.ToLower(strings.TrimSpace(contentType))
}
