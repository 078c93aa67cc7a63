package upstream

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultDiscoveryTimeout bounds one GET /models of model discovery.
const DefaultDiscoveryTimeout = 10 * time.Second

// discovery finds the backend's model when none is configured: the first
// model of GET {base}/models, asked on first use and then kept. Asking
// must neither hold up the server's start nor queue every request behind
// a slow backend: one request asks at a time (singleflight), the others
// wait for its answer only as long as their own context lets them, and
// no lock is held while the backend is asked. A failed answer is not
// kept, so the next request asks again.
type discovery struct {
	url     string
	timeout time.Duration

	mu    sync.Mutex
	model string
	calls singleflight.Group
}

// resolve returns the discovered model, asking the backend if it is not
// known yet.
func (d *discovery) resolve(ctx context.Context, c *Client) (string, error) {
	d.mu.Lock()
	m := d.model
	d.mu.Unlock()
	if m != "" {
		return m, nil
	}
	ch := d.calls.DoChan("", func() (any, error) {
		// The request that started the call may leave; the others still
		// wait for it, so it runs on its own deadline.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.timeout)
		defer cancel()
		m, err := c.firstModel(ctx, d.url)
		if err == nil {
			d.mu.Lock()
			d.model = m
			d.mu.Unlock()
		}
		return m, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// firstModel asks the backend for its models and returns the first.
func (c *Client) firstModel(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", &Error{Message: "building the model list request", Err: err}
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", &Error{Message: "asking for the model list", Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &Error{Status: resp.StatusCode, Message: "GET /models answered " + resp.Status}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return "", &Error{Message: "reading the model list", Err: err}
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", &Error{Message: "the backend lists no model; configure the upstream model"}
	}
	return list.Data[0].ID, nil
}

// Model returns the model name sent upstream: the configured one, or
// the backend's first model when it is discovered.
func (u *Client) Model(ctx context.Context) (string, error) {
	if u.discovery == nil {
		return u.model, nil
	}
	return u.discovery.resolve(ctx, u)
}
