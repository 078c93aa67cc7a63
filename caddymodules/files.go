package caddymodules

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/files"
)

func init() {
	registerHandler[Files](httpcaddyfile.After, "reverse_proxy")
}

// Files serves the Files API, shaped like OpenAI's so that its SDKs work
// unchanged: POST and GET <prefix>/files, GET and DELETE
// <prefix>/files/{id}, GET <prefix>/files/{id}/content. Each account sees
// only its own files; the limits, formats, scanning and retention are in
// docs/files.md. It needs switchyard_auth in front of it.
type Files struct {
	// The path before /files. Default: /v3.
	Prefix string `json:"prefix,omitempty"`

	handler http.Handler
}

// CaddyModule returns the Caddy module information.
func (Files) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_files",
		New: func() caddy.Module { return new(Files) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Files) Provision(ctx caddy.Context) error {
	if h.Prefix == "" {
		h.Prefix = "/v3"
	}
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	svc, err := app.FilesService()
	if err != nil {
		return err
	}
	// Uploads are free and stream to the blob store: the admission step
	// in front must neither bill them nor read them.
	app.admission.routes.AddUpload(h.Prefix + "/files")
	h.handler = files.NewHandler(files.HandlerConfig{
		Service: svc,
		Prefix:  h.Prefix,
		AccountID: func(ctx context.Context) (string, bool) {
			p, ok := principalOf(ctx)
			return p.AccountID, ok
		},
	})
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Files) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	h.handler.ServeHTTP(w, r)
	return nil
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_files [<prefix>]
func (h *Files) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return optionalArg(d, &h.Prefix)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Files)(nil)
	_ caddyhttp.MiddlewareHandler = (*Files)(nil)
	_ caddyfile.Unmarshaler       = (*Files)(nil)
)

// checkPathPrefix checks the path prefix a handler's routes are below:
// the default (empty), or a path that starts with / and does not end
// with one, so that prefix+"/route" is a clean path.
func checkPathPrefix(module, prefix string) error {
	if prefix != "" && (!strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/")) {
		return fmt.Errorf("%s: prefix %q must start with / and not end with one", module, prefix)
	}
	return nil
}

// Validate implements caddy.Validator.
func (h *Files) Validate() error {
	return checkPathPrefix("switchyard_files", h.Prefix)
}

var _ caddy.Validator = (*Files)(nil)
