package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type fakeRouter map[string][]Target

func (f fakeRouter) Route(model string) ([]Target, bool) {
	t, ok := f[model]
	return t, ok
}

// answering is a pool that answers status with body, recording the
// models it was asked for.
func answering(status int, body string, asked *[]string) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		*asked = append(*asked, string(b))
		h := http.Header{"Content-Type": {"text/event-stream"}, UpstreamHeader: {"up-1"}}
		if status != 200 {
			h.Set("Content-Type", "application/json")
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}, nil
	})
}

const okStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

func TestRouterFallsBackBeforeTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name     string
		status   int
		fallback bool
	}{
		{"5xx", 503, true},
		{"429", 429, true},
		{"refused request", 400, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var first, second []string
			var moved []string
			c, err := New(Config{
				Router: fakeRouter{"alpha": {
					{Model: "alpha", Transport: answering(tt.status, `{"error":{"message":"no"}}`, &first)},
					{Model: "beta", Transport: answering(200, okStream, &second)},
				}},
				OnFallback: func(from, to string) { moved = append(moved, from+">"+to) },
			})
			if err != nil {
				t.Fatal(err)
			}
			st, err := c.Stream(context.Background(), Request{Model: "alpha"})
			if !tt.fallback {
				var ue *Error
				if !errors.As(err, &ue) || ue.Status != tt.status || len(second) != 0 {
					t.Fatalf("err %v, fallback asked %d times; want the %d and no fallback", err, len(second), tt.status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Next(); err != nil {
				t.Fatal(err)
			}
			got := st.Served()
			if got.Model != "beta" || got.Upstream != "up-1" || got.Fallbacks != 1 {
				t.Errorf("served %+v", got)
			}
			if len(moved) != 1 || moved[0] != "alpha>beta" {
				t.Errorf("fallbacks reported %v", moved)
			}
			if !strings.Contains(first[0], `"model":"alpha"`) || !strings.Contains(second[0], `"model":"beta"`) {
				t.Errorf("models sent: %s / %s", first, second)
			}
		})
	}
}

func TestRouterUnknownModel(t *testing.T) {
	c, _ := New(Config{Router: fakeRouter{}})
	_, err := c.Stream(context.Background(), Request{Model: "nope"})
	var ue *Error
	if !errors.As(err, &ue) || ue.Status != 404 || !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("err %v, want 404 ErrUnknownModel", err)
	}
}
