package caddymodules

import (
	"bytes"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// bodyVar holds a request body read by one handler for the handlers after
// it (limits, meter, chat), so that it is read from the client once.
const bodyVar = "switchyard.body"

// requestBody reads the request body, at most maxBytes of it, once per
// request: later calls return the same bytes. The body is put back for
// handlers that read r.Body themselves, such as reverse_proxy.
func requestBody(r *http.Request, maxBytes int64) ([]byte, error) {
	if b, ok := caddyhttp.GetVar(r.Context(), bodyVar).([]byte); ok {
		return b, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	if err != nil {
		return nil, apierror.InvalidRequest("invalid_body", "The request body could not be read.")
	}
	if int64(len(body)) > maxBytes {
		return nil, apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest,
			"request_too_large", "The request body is larger than this endpoint accepts.")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	caddyhttp.SetVar(r.Context(), bodyVar, body)
	return body, nil
}
