package demobackend

import (
	"net/http"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// serveChat answers a validated chat request.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, rec *Request, reqID uint64) {
	req := rec.Chat
	if !s.opts.knowsModel(req.Model) {
		apierror.Write(w, modelNotFound(req.Model))
		return
	}
	var reply Reply
	ok := false
	if s.opts.Answer != nil {
		reply, ok = s.opts.Answer(rec)
	}
	if !ok {
		reply = DemoReply(req, s.opts.Reasoning)
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if !sleep(r.Context(), reply.Delay) {
		abort()
	}
	if reply.Disconnect {
		abort()
	}
	if reply.EarlyHints {
		w.Header().Set("Link", "</v1/models>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeErrorReply(w, reply)
		return
	}
	c := s.resolve(req, reply, reqID)
	defer s.recordServed(rec, req.Stream, c)
	if rec.Path == responsesPath {
		s.serveResponse(w, r, req, c, reply)
		return
	}
	if req.Stream {
		s.stream(w, r, req, c, reply)
		return
	}
	s.answerJSON(w, r, c, reply)
}

// writeErrorReply sends a Reply that is a failure.
func writeErrorReply(w http.ResponseWriter, r Reply) {
	if r.Body == "" {
		apierror.Write(w, defaultError(r.Status))
		return
	}
	if w.Header().Get("Content-Type") == "" {
		ct := "text/plain; charset=utf-8"
		if b := r.Body[0]; b == '{' || b == '[' {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write([]byte(r.Body))
}

// defaultError is what OpenAI answers with for status.
func defaultError(status int) *apierror.Error {
	switch {
	case status == http.StatusUnauthorized:
		return apierror.InvalidAPIKey("Incorrect API key provided.")
	case status == http.StatusNotFound:
		return apierror.New(status, apierror.TypeInvalidRequest, codeModelNotFound, "The model does not exist or you do not have access to it.")
	case status == http.StatusTooManyRequests:
		return apierror.New(status, apierror.TypeRateLimit, "rate_limit_exceeded", "Rate limit reached for requests. Please try again later.")
	case status >= 500:
		return apierror.New(status, apierror.TypeServer, "server_error", "The server had an error while processing your request. Sorry about that!")
	default:
		return apierror.New(status, apierror.TypeInvalidRequest, "invalid_request", http.StatusText(status))
	}
}
