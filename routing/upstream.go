package routing

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Upstream is one backend of a model's pool, its URL taken apart.
type Upstream struct {
	Name     string // in metrics, logs and usage records
	Scheme   string
	Host     string // Host header: the URL's host[:port]
	Dial     string // host:port
	BasePath string // without a trailing slash
	APIKey   string // "": no Authorization header
	Model    string // the model name sent upstream
	Weight   int

	// authorization is "Bearer " + APIKey, made once by ParseUpstream
	// rather than for every request.
	authorization string
}

// bearer is the Authorization header of a request to up.
func (up *Upstream) bearer() string {
	const scheme = "Bearer "
	if a := up.authorization; len(a) > len(scheme) && a[len(scheme):] == up.APIKey {
		return a
	}
	return scheme + up.APIKey // an Upstream ParseUpstream did not make, or changed since
}

// ParseUpstream reads the upstream of model whose base URL is rawURL
// (such as http://10.0.0.5:8000/v1). An empty name is the URL's
// host:port, an empty upstreamModel the model's name, a zero weight 1.
func ParseUpstream(model, rawURL, apiKey, upstreamModel, name string, weight int) (Upstream, error) {
	raw := strings.TrimSpace(rawURL)
	pu, err := url.Parse(raw)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" || pu.User != nil || pu.RawQuery != "" {
		return Upstream{}, fmt.Errorf("model %q: upstream %q: want an http(s) base URL such as http://127.0.0.1:8000/v1", model, raw)
	}
	dial := pu.Host
	if pu.Port() == "" {
		port := "80"
		if pu.Scheme == "https" {
			port = "443"
		}
		dial = net.JoinHostPort(pu.Hostname(), port)
	}
	out := Upstream{
		Name:     name,
		Scheme:   pu.Scheme,
		Host:     pu.Host,
		Dial:     dial,
		BasePath: strings.TrimSuffix(pu.Path, "/"),
		APIKey:   strings.TrimSpace(apiKey),
		Model:    upstreamModel,
		Weight:   weight,
	}
	if out.Name == "" {
		out.Name = dial
	}
	if out.Model == "" {
		out.Model = model
	}
	if out.Weight == 0 {
		out.Weight = 1
	}
	if out.APIKey != "" {
		out.authorization = "Bearer " + out.APIKey
	}
	return out, nil
}

// Outgoing is req as it goes to up once its pool chose it: up's scheme,
// base path, Host and key (none when it has none, never the caller's),
// and, for a request that carries a State (not a health check), the
// body with up's model name. state is that State, nil without one.
func (up *Upstream) Outgoing(req *http.Request) (out *http.Request, state *State, err error) {
	state, ok := StateFrom(req.Context())
	var body []byte
	if ok {
		if body, err = state.BodyFor(up.Model); err != nil {
			return nil, nil, err
		}
	}
	withBody := ok && req.Body != nil && req.Body != http.NoBody
	out = req.WithContext(req.Context())
	u := *req.URL
	u.Scheme = up.Scheme
	u.Path = up.BasePath + req.URL.Path
	u.RawPath = ""
	out.URL = &u
	out.Host = up.Host
	var authorization, length string
	if up.APIKey != "" {
		authorization = up.bearer()
	}
	if withBody {
		length = strconv.Itoa(len(body))
	}
	out.Header = outgoingHeader(req.Header, authorization, length)
	if !ok {
		return out, nil, nil
	}
	if withBody {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
	}
	return out, state, nil
}

// outgoingHeader is h copied, as h.Clone would copy it, with
// Authorization set to authorization, or deleted when that is empty, and
// Content-Length set to length unless that is empty. The values set take
// the copy's one array of values as well: a Clone and two Sets allocated
// two arrays more.
func outgoingHeader(h http.Header, authorization, length string) http.Header {
	nv := 2
	for _, vv := range h {
		nv += len(vv)
	}
	sv := make([]string, nv)
	out := make(http.Header, len(h)+2)
	for k, vv := range h {
		if vv == nil {
			// Preserved, as Clone does: reverse_proxy tells a nil value
			// from an empty one.
			out[k] = nil
			continue
		}
		n := copy(sv, vv)
		out[k] = sv[:n:n]
		sv = sv[n:]
	}
	if authorization != "" {
		sv[0] = authorization
		out["Authorization"] = sv[:1:1]
	} else {
		delete(out, "Authorization")
	}
	if length != "" {
		sv[1] = length
		out["Content-Length"] = sv[1:2:2]
	}
	return out
}
