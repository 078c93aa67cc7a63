package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// HandlerConfig configures NewHandler.
type HandlerConfig struct {
	// The Files API. Required.
	Service *Service

	// AccountID returns the account a request acts for, which the
	// authentication in front of the handler put in the context. A
	// request without one is answered 401 invalid_api_key. Required.
	AccountID func(ctx context.Context) (accountID string, ok bool)

	// Path before "/files", e.g. "/v3". Default: "" (the handler sees
	// paths that start with /files).
	Prefix string
}

// NewHandler returns the OpenAI-compatible Files API:
//
//	POST   {prefix}/files               upload (multipart/form-data)
//	GET    {prefix}/files               list: limit, after, order, purpose
//	GET    {prefix}/files/{id}          metadata
//	GET    {prefix}/files/{id}/content  bytes (also HEAD; ranges supported)
//	DELETE {prefix}/files/{id}          delete
//
// Every error is an apierror envelope, including unknown paths and
// methods.
func NewHandler(cfg HandlerConfig) http.Handler {
	if cfg.Service == nil || cfg.AccountID == nil {
		panic("files: HandlerConfig needs Service and AccountID")
	}
	return &handler{svc: cfg.Service, account: cfg.AccountID, prefix: strings.TrimSuffix(cfg.Prefix, "/")}
}

type handler struct {
	svc     *Service
	account func(context.Context) (string, bool)
	prefix  string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, h.prefix+"/files")
	if !ok || rest != "" && rest[0] != '/' {
		apierror.Write(w, apierror.NotFound("Unknown path "+truncate(r.URL.Path, 200)+"."))
		return
	}
	accountID, ok := h.account(r.Context())
	if !ok || accountID == "" {
		apierror.Write(w, apierror.InvalidAPIKey("Missing or invalid API key."))
		return
	}
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case rest == "" || rest == "/":
		switch r.Method {
		case http.MethodPost:
			h.upload(w, r, accountID)
		case http.MethodGet, http.MethodHead:
			h.list(w, r, accountID)
		default:
			methodNotAllowed(w, "GET, HEAD, POST")
		}
	case len(segs) == 1:
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.get(w, r, accountID, segs[0])
		case http.MethodDelete:
			h.delete(w, r, accountID, segs[0])
		default:
			methodNotAllowed(w, "GET, HEAD, DELETE")
		}
	case len(segs) == 2 && segs[1] == "content":
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.content(w, r, accountID, segs[0])
		default:
			methodNotAllowed(w, "GET, HEAD")
		}
	default:
		apierror.Write(w, apierror.NotFound("Unknown path "+truncate(r.URL.Path, 200)+"."))
	}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	apierror.Write(w, apierror.New(http.StatusMethodNotAllowed, apierror.TypeInvalidRequest,
		"method_not_allowed", "Method not allowed. Allowed: "+allow+"."))
}

// fileObject is OpenAI's File object.
type fileObject struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Bytes     int64  `json:"bytes"`
	CreatedAt int64  `json:"created_at"`
	ExpiresAt int64  `json:"expires_at"`
	Filename  string `json:"filename"`
	Purpose   string `json:"purpose"`
	// Status is always "processed": a file is stored complete or not at
	// all. OpenAI has deprecated the field but SDKs still read it.
	Status string `json:"status"`
}

func toObject(f storage.File) fileObject {
	return fileObject{
		ID:        f.ID,
		Object:    "file",
		Bytes:     f.Bytes,
		CreatedAt: f.CreatedAt.Unix(),
		ExpiresAt: f.ExpiresAt.Unix(),
		Filename:  f.Filename,
		Purpose:   f.Purpose,
		Status:    "processed",
	}
}

type listObject struct {
	Object  string       `json:"object"`
	Data    []fileObject `json:"data"`
	HasMore bool         `json:"has_more"`
	FirstID *string      `json:"first_id"`
	LastID  *string      `json:"last_id"`
}

type deletedObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apierror.Write(w, apierror.Internal())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
}

func (h *handler) upload(w http.ResponseWriter, r *http.Request, accountID string) {
	// A declared length that cannot fit is refused before reading a byte.
	if r.ContentLength > h.svc.MaxRequestBytes() {
		apierror.Write(w, envelope(errTooLarge(h.svc.MaxUploadBytes())))
		return
	}
	f, err := h.svc.Upload(r.Context(), accountID, r.Header.Get("Content-Type"), r.Body)
	if err != nil {
		if errors.Is(err, ErrTooManyFiles) || errors.Is(err, ErrTooManyBytes) {
			// OpenAI's SDKs retry 409s unless told not to; a full quota
			// stays full.
			w.Header().Set("X-Should-Retry", "false")
		}
		apierror.Write(w, envelope(err))
		return
	}
	writeJSON(w, toObject(f))
}

func (h *handler) list(w http.ResponseWriter, r *http.Request, accountID string) {
	q := r.URL.Query()
	var p storage.FileListParams
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > MaxListLimit {
			apierror.Write(w, envelope(errBadRequest("invalid_limit", "limit must be an integer between 1 and %d.", MaxListLimit)))
			return
		}
		p.Limit = n
	}
	if v := q.Get("order"); v != "" {
		p.Order = storage.FileOrder(v)
	}
	p.After = q.Get("after")
	p.Purpose = q.Get("purpose")
	page, err := h.svc.List(r.Context(), accountID, p)
	if err != nil {
		apierror.Write(w, envelope(err))
		return
	}
	out := listObject{Object: "list", Data: make([]fileObject, len(page.Files)), HasMore: page.HasMore}
	for i, f := range page.Files {
		out.Data[i] = toObject(f)
	}
	if n := len(out.Data); n > 0 {
		out.FirstID, out.LastID = &out.Data[0].ID, &out.Data[n-1].ID
	}
	writeJSON(w, out)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request, accountID, id string) {
	f, err := h.svc.Get(r.Context(), accountID, id)
	if err != nil {
		apierror.Write(w, envelope(err))
		return
	}
	writeJSON(w, toObject(f))
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request, accountID, id string) {
	f, err := h.svc.Delete(r.Context(), accountID, id)
	if err != nil {
		apierror.Write(w, envelope(err))
		return
	}
	writeJSON(w, deletedObject{ID: f.ID, Object: "file", Deleted: true})
}

func (h *handler) content(w http.ResponseWriter, r *http.Request, accountID, id string) {
	WriteContent(w, r, h.svc, accountID, id)
}

// WriteContent answers with the bytes of accountID's file id as a
// download, or with the error envelope: the Files API's content route,
// and the admin API's for the dashboard.
func WriteContent(w http.ResponseWriter, r *http.Request, svc *Service, accountID, id string) {
	f, obj, err := svc.Content(r.Context(), accountID, id)
	if err != nil {
		apierror.Write(w, envelope(err))
		return
	}
	defer obj.Close()
	hd := w.Header()
	hd.Set("Content-Type", f.MIME)
	hd.Set("Content-Disposition", contentDisposition(f.Filename))
	hd.Set("X-Content-Type-Options", "nosniff")
	// The bytes are the caller's, not ours: never let a browser run them
	// in our origin, whatever they are.
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Cache-Control", "private, max-age=0, must-revalidate")
	// Content never changes under an id, so its digest is a strong
	// validator for If-None-Match and If-Range.
	if f.SHA256 != "" {
		hd.Set("ETag", `"`+f.SHA256+`"`)
	}
	http.ServeContent(w, r, "", f.CreatedAt, obj)
}

// APIError is the client-visible error for an error of the Service, for
// other HTTP surfaces over it (the admin API).
func APIError(err error) *apierror.Error { return envelope(err) }

// envelope is the client-visible error for an error of the Service, as
// docs/files.md lists them:
//
//	ErrNotFound            404 invalid_request_error  not_found
//	ErrInvalidRequest      400 invalid_request_error  Error.Code
//	ErrInvalidFormat       400 invalid_request_error  invalid_file_format
//	ErrUploadTimeout       400 invalid_request_error  upload_timeout
//	ErrTooLarge            413 invalid_request_error  file_too_large
//	ErrAVHit               422 invalid_request_error  av_hit
//	ErrTooManyFiles        409 invalid_request_error  max_files_reached
//	ErrTooManyBytes        409 invalid_request_error  max_storage_reached
//	ErrScannerUnavailable  503 server_error           av_unavailable (Retry-After: 30)
//	anything else          500 server_error           internal_error
//
// Codes the spec names (invalid_file_format, av_hit) keep its spelling
// and status; the others are Switchyard's.
func envelope(err error) *apierror.Error {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Kind: err}
	}
	switch {
	case errors.Is(err, ErrInternal):
		// Before the others: nothing below may turn a logged store
		// failure into a client error.
		return apierror.Internal()
	case errors.Is(err, ErrNotFound):
		return apierror.NotFound(fmt.Sprintf("No such File object: %s", e.FileID))
	case errors.Is(err, ErrInvalidRequest):
		return apierror.InvalidRequest(e.Code, e.Detail)
	case errors.Is(err, ErrInvalidFormat):
		return apierror.InvalidRequest("invalid_file_format", e.Detail)
	case errors.Is(err, ErrUploadTimeout):
		return apierror.InvalidRequest("upload_timeout", e.Detail)
	case errors.Is(err, ErrTooLarge):
		return apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest, "file_too_large",
			fmt.Sprintf("The file exceeds the maximum upload size of %d bytes.", e.Limit))
	case errors.Is(err, ErrAVHit):
		return apierror.New(http.StatusUnprocessableEntity, apierror.TypeInvalidRequest, "av_hit",
			"The file failed the malware scan and was not stored.")
	case errors.Is(err, ErrTooManyFiles):
		return apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "max_files_reached",
			fmt.Sprintf("The account already stores the maximum of %d files. Delete files before uploading more.", e.Limit))
	case errors.Is(err, ErrTooManyBytes):
		return apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "max_storage_reached",
			fmt.Sprintf("The file would take the account's stored bytes over the limit of %d bytes. Delete files before uploading more.", e.Limit))
	case errors.Is(err, ErrScannerUnavailable):
		ae := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "av_unavailable",
			"The malware scanner is unavailable, so the file could not be accepted. Retry later.")
		ae.RetryAfter = 30
		return ae
	}
	return apierror.Internal()
}

// contentDisposition offers the file as a download under its stored name,
// with an ASCII fallback for old clients and the exact name in RFC 5987
// form.
func contentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7E || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	v := mime.FormatMediaType("attachment", map[string]string{"filename": ascii})
	if ascii != name {
		v += "; filename*=UTF-8''" + rfc5987Escape(name)
	}
	return v
}

// rfc5987Escape percent-encodes everything outside RFC 5987's attr-char.
func rfc5987Escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
