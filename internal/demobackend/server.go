package demobackend

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// maxBodyBytes bounds a request body; OpenAI's own limit is of this order
// and inline images make bodies large.
const maxBodyBytes = 32 << 20

// modelsCreated is the fixed "created" of listed models, so that the
// listing is byte-for-byte stable.
const modelsCreated = 1735689600 // 2025-01-01T00:00:00Z

// Server is the backend. It is an http.Handler; mount it at the root,
// since it answers the /v1/... paths itself. It is safe for concurrent
// use.
type Server struct {
	opts Options

	reqSeq  atomic.Uint64 // numbers requests: x-request-id, completion ids
	callSeq atomic.Uint64 // numbers generated tool-call ids
}

// Request is a request the server received, as it arrived.
type Request struct {
	Method string
	Path   string // URL path, without the query
	// RequestURI is the request target as sent, the query included.
	RequestURI string
	Header     http.Header
	Body       []byte
	// Chat is the decoded body of a POST /v1/chat/completions request
	// whose body passed validation, also when the request was then refused
	// for its key or model; nil for other requests and invalid bodies. A
	// POST /v1/responses request has the ChatRequest it stands for
	// (decodeResponsesRequest); its Path tells it apart.
	Chat *ChatRequest
}

// New returns a Server configured by opts.
func New(opts Options) *Server {
	return &Server{opts: opts}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := s.reqSeq.Add(1)
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", id))

	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	rec := Request{Method: r.Method, Path: r.URL.Path, RequestURI: r.RequestURI, Header: r.Header.Clone(), Body: body}
	isChat := r.URL.Path == "/v1/chat/completions"
	isResponses := r.URL.Path == responsesPath
	var chat *ChatRequest
	var chatErr *apierror.Error
	if r.Method == http.MethodPost && readErr == nil {
		switch {
		case isChat:
			chat, chatErr = decodeChatRequest(body)
		case isResponses:
			chat, chatErr = decodeResponsesRequest(body)
		}
		rec.Chat = chat
	}
	if s.opts.Observe != nil {
		s.opts.Observe(rec)
	}

	if readErr != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(readErr, &tooLarge) {
			apierror.Write(w, apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest,
				"request_too_large", fmt.Sprintf("Request body exceeds %d bytes.", maxBodyBytes)))
		}
		return // the client went away while sending
	}
	if e := s.authenticate(r); e != nil {
		apierror.Write(w, e)
		return
	}

	switch {
	case isChat, isResponses:
		if !allowMethod(w, r, http.MethodPost) {
			return
		}
		if chatErr != nil {
			apierror.Write(w, chatErr)
			return
		}
		s.serveChat(w, r, &rec, id)
	case r.URL.Path == "/v1/models":
		if allowMethod(w, r, http.MethodGet) {
			s.serveModels(w)
		}
	case strings.HasPrefix(r.URL.Path, "/v1/models/"):
		if allowMethod(w, r, http.MethodGet) {
			s.serveModel(w, strings.TrimPrefix(r.URL.Path, "/v1/models/"))
		}
	default:
		apierror.Write(w, apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "unknown_url",
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)))
	}
}

func allowMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	apierror.Write(w, apierror.New(http.StatusMethodNotAllowed, apierror.TypeInvalidRequest, "method_not_allowed",
		fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path)))
	return false
}

// authenticate checks the bearer key with OpenAI's messages for a missing
// and a wrong key.
func (s *Server) authenticate(r *http.Request) *apierror.Error {
	if s.opts.APIKey == "" {
		return nil
	}
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || key == "" {
		return apierror.InvalidAPIKey("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.APIKey)) != 1 {
		return apierror.InvalidAPIKey("Incorrect API key provided: " + maskKey(key) + ".")
	}
	return nil
}

// maskKey shows the ends of a key only, as OpenAI does in its 401 message.
func maskKey(key string) string {
	if len(key) <= 8 {
		return "***"
	}
	return key[:3] + "***" + key[len(key)-4:]
}

type modelJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func newModelJSON(id string) modelJSON {
	return modelJSON{ID: id, Object: "model", Created: modelsCreated, OwnedBy: "switchyard"}
}

func (s *Server) serveModels(w http.ResponseWriter) {
	list := struct {
		Object string      `json:"object"`
		Data   []modelJSON `json:"data"`
	}{Object: "list", Data: []modelJSON{}}
	for _, m := range s.opts.models() {
		list.Data = append(list.Data, newModelJSON(m))
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) serveModel(w http.ResponseWriter, id string) {
	for _, m := range s.opts.models() {
		if m == id {
			writeJSON(w, http.StatusOK, newModelJSON(m))
			return
		}
	}
	apierror.Write(w, modelNotFound(id))
}

func modelNotFound(model string) *apierror.Error {
	return apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, codeModelNotFound,
		fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apierror.Write(w, apierror.Internal())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

var _ http.Handler = (*Server)(nil)
