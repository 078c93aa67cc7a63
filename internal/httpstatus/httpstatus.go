// Package httpstatus words an HTTP status in the error envelope's terms,
// for the answers the gateway gives without a handler of its own: a
// route it does not serve, a method it does not allow, Caddy's own
// failures. It sits above internal/apierror, which writes the envelope,
// and internal/clip, which shortens the path it quotes.
package httpstatus

import (
	"fmt"
	"net/http"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
)

// AllowOnly reports whether r's method is method, and otherwise answers
// 405 with an Allow header.
func AllowOnly(method string, w http.ResponseWriter, r *http.Request) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	apierror.Write(w, Envelope(http.StatusMethodNotAllowed, r))
	return false
}

// NotServed is the answer to a route the gateway does not serve: one
// code, route_not_found, whether /v1's proxy refused the route or no
// route matched at all (on /v3, the dashboard, anywhere).
func NotServed(r *http.Request) *apierror.Error {
	e := apierror.NotFound("This gateway does not serve " + r.Method + " " + clip.Ellipsis(r.URL.Path, 80) + ".")
	e.Code = "route_not_found"
	return e
}

// Envelope describes an HTTP status in the envelope's terms.
func Envelope(status int, r *http.Request) *apierror.Error {
	switch status {
	case http.StatusNotFound:
		return NotServed(r)
	case http.StatusMethodNotAllowed:
		return apierror.New(status, apierror.TypeInvalidRequest, "method_not_allowed",
			fmt.Sprintf("Method %s is not allowed on %s.", r.Method, r.URL.Path))
	case http.StatusRequestEntityTooLarge:
		return apierror.New(status, apierror.TypeInvalidRequest, "request_too_large", "The request body is too large.")
	case http.StatusNotImplemented:
		return apierror.New(status, apierror.TypeInvalidRequest, "not_implemented",
			fmt.Sprintf("%s is not available on this server yet.", r.URL.Path))
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return apierror.New(http.StatusBadGateway, apierror.TypeServer, "upstream_unavailable",
			"The model backend could not be reached. Retry with backoff.")
	case http.StatusServiceUnavailable:
		return apierror.New(status, apierror.TypeServer, "service_unavailable",
			"The service is temporarily unavailable. Retry with backoff.")
	}
	if status >= 500 {
		e := apierror.Internal()
		e.Status = status
		return e
	}
	return apierror.New(status, apierror.TypeInvalidRequest, "invalid_request",
		http.StatusText(status)+".")
}
