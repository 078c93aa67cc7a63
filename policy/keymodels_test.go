package policy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

const upstreamList = `{"object":"list","data":[` +
	`{"id":"alpha","object":"model","created":1,"owned_by":"x"},` +
	`{"id":"beta","object":"model","created":2,"owned_by":"x"},` +
	`{"id":"gamma","object":"model","created":3,"owned_by":"x"}],"has_more":false}`

// viewed is what the client got from handler behind ModelView, and what
// reached handler.
type viewed struct {
	rec     *httptest.ResponseRecorder
	reached bool
	accept  string // the Accept-Encoding handler saw
}

// serveView runs handler behind ModelView, as the gateway's handlers do,
// for a request of method and path by p (nil: not authenticated).
func serveView(p *Principal, method, path string, handler http.HandlerFunc) viewed {
	r := httptest.NewRequest(method, path, nil)
	r.Header.Set("Accept-Encoding", "gzip")
	var caller Principal
	if p != nil {
		caller = *p
	}
	var v viewed
	v.rec = httptest.NewRecorder()
	w, done, err := ModelView(v.rec, r, "/v1", caller)
	if err != nil {
		apierror.Write(w, err)
		return v
	}
	defer done()
	v.reached = true
	v.accept = r.Header.Get("Accept-Encoding")
	handler(w, r)
	return v
}

func keyFor(models ...string) *Principal {
	return &Principal{KeyHint: "sk-...abcd", Controls: storage.KeyControls{Models: models}}
}

// writeBody answers with status and body in pieces, with the length the
// whole body has, as an upstream would through reverse_proxy.
func writeBody(status int, body string, pieces int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		step := max(1, len(body)/pieces)
		for i := 0; i < len(body); i += step {
			_, _ = w.Write([]byte(body[i:min(len(body), i+step)]))
			_ = http.NewResponseController(w).Flush()
		}
	}
}

func listedIDs(t *testing.T, body string) []string {
	t.Helper()
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string `json:"id"`
			Created int64  `json:"created"`
		} `json:"data"`
		HasMore *bool `json:"has_more"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || list.Object != "list" || list.HasMore == nil {
		t.Fatalf("not the list with its fields: %v %s", err, body)
	}
	ids := []string{}
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

func TestModelViewShowsOnlyTheKeysModels(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Principal
		want []string
	}{
		{"a key limited to two models", keyFor("gamma", "alpha"), []string{"alpha", "gamma"}},
		{"a key limited to a model not served", keyFor("delta"), []string{}},
		{"a key without a list", keyFor(), []string{"alpha", "beta", "gamma"}},
		{"no key", nil, []string{"alpha", "beta", "gamma"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := serveView(tc.p, "GET", "/v1/models", writeBody(http.StatusOK, upstreamList, 7))
			if v.rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", v.rec.Code, v.rec.Body)
			}
			if got := listedIDs(t, v.rec.Body.String()); !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
			if cl := v.rec.Header().Get("Content-Length"); cl != strconv.Itoa(v.rec.Body.Len()) {
				t.Errorf("Content-Length %s for a body of %d bytes", cl, v.rec.Body.Len())
			}
			filtered := tc.p != nil && len(tc.p.Controls.Models) > 0
			if filtered != (v.accept == "") {
				t.Errorf("Accept-Encoding upstream %q (filtered: %v)", v.accept, filtered)
			}
		})
	}
}

func TestModelViewKeepsEntriesAsWritten(t *testing.T) {
	v := serveView(keyFor("beta"), "GET", "/v1/models", writeBody(http.StatusOK, upstreamList, 1))
	want := `{"data":[{"id":"beta","object":"model","created":2,"owned_by":"x"}],"has_more":false,"object":"list"}`
	if got := v.rec.Body.String(); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestModelViewRefusesAModelOutsideTheList(t *testing.T) {
	upstream := writeBody(http.StatusOK, `{"id":"beta","object":"model"}`, 1)
	for _, method := range []string{"GET", "HEAD"} {
		v := serveView(keyFor("alpha"), method, "/v1/models/beta", upstream)
		if v.reached || v.rec.Code != http.StatusNotFound || !strings.Contains(v.rec.Body.String(), `"code":"model_not_found"`) {
			t.Errorf("%s of a model outside the list: reached %v, %d %s", method, v.reached, v.rec.Code, v.rec.Body)
		}
	}
	v := serveView(keyFor("alpha", "beta"), "GET", "/v1/models/beta", upstream)
	if !v.reached || v.rec.Code != http.StatusOK || v.rec.Body.String() != `{"id":"beta","object":"model"}` {
		t.Errorf("a listed model: reached %v, %d %s", v.reached, v.rec.Code, v.rec.Body)
	}
	// The allow-list compares names exactly, as CheckModel does.
	if v := serveView(keyFor("Beta"), "GET", "/v1/models/beta", upstream); v.reached {
		t.Errorf("a name differing in case reached the upstream")
	}
}

func TestModelViewFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"not JSON", writeBody(http.StatusOK, "<html>models</html>", 1)},
		{"no data array", writeBody(http.StatusOK, `{"object":"list"}`, 1)},
		{"an entry without an id", writeBody(http.StatusOK, `{"object":"list","data":[{"name":"beta"}]}`, 1)},
		{"compressed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			writeBody(http.StatusOK, upstreamList, 1)(w, r)
		}},
		{"too long", writeBody(http.StatusOK, `{"object":"list","data":[`+strings.Repeat(`{"id":"beta"},`, maxModelList/14)+`{"id":"alpha"}]}`, 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := serveView(keyFor("alpha"), "GET", "/v1/models", tc.handler)
			if v.rec.Code != http.StatusBadGateway || !strings.Contains(v.rec.Body.String(), `"code":"upstream_unavailable"`) {
				t.Fatalf("%d %s, want 502 upstream_unavailable", v.rec.Code, v.rec.Body)
			}
			if strings.Contains(v.rec.Body.String(), "beta") || v.rec.Header().Get("Content-Encoding") != "" {
				t.Fatalf("the unfiltered answer leaked: %v %s", v.rec.Header(), v.rec.Body)
			}
		})
	}
}

// interimRecorder keeps 1xx answers apart from the final one, as a
// server's connection does.
type interimRecorder struct {
	*httptest.ResponseRecorder
	interim []int
}

func (r *interimRecorder) WriteHeader(status int) {
	if status >= 100 && status < 200 {
		r.interim = append(r.interim, status)
		return
	}
	r.ResponseRecorder.WriteHeader(status)
}

func TestModelViewPassesErrorsAndInterimAnswers(t *testing.T) {
	rec := &interimRecorder{ResponseRecorder: httptest.NewRecorder()}
	r := httptest.NewRequest("GET", "/v1/models", nil)
	w, done, err := ModelView(rec, r, "/v1", *keyFor("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	w.Header().Set("Link", "</v1/models>; rel=preload")
	w.WriteHeader(http.StatusEarlyHints)
	apierror.Write(w, apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "service_unavailable", "Busy."))
	done()
	if !slices.Equal(rec.interim, []int{http.StatusEarlyHints}) {
		t.Errorf("interim answers %v, want the 103 passed on", rec.interim)
	}
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"service_unavailable"`) {
		t.Fatalf("%d %s, want the upstream's 503 as it was", rec.Code, rec.Body)
	}
	// Other routes are left alone.
	v := serveView(keyFor("alpha"), "GET", "/v1/modelsx", writeBody(http.StatusOK, upstreamList, 1))
	if v.rec.Body.String() != upstreamList {
		t.Fatalf("another route was changed: %s", v.rec.Body)
	}
}
