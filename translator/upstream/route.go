package upstream

import (
	"errors"
	"net/http"
)

// UpstreamHeader is the response header in which a Target's transport
// names the backend that answered. It travels only between the gateway's
// own pool and this client; no client of the gateway sees it.
const UpstreamHeader = "X-Switchyard-Upstream"

// Router sends the calls of each model to the backends configured for it.
// It is how a gateway with several backends plugs its pools in: choosing
// one backend of a pool, health checks and retries within a pool are the
// Router's, and the Client only walks the ordered list of pools.
type Router interface {
	// Route returns where calls for model go, in order: the model's own
	// pool, then its fallbacks. ok is false for a model that is not
	// configured.
	Route(model string) (targets []Target, ok bool)
}

// Target is one pool of backends serving one configured model.
type Target struct {
	// Model is the configured name of the model. It is sent as the
	// request's model (the pool puts each backend's own name in its
	// place), and it is the model the usage record names and prices.
	Model string
	// Transport carries a request to the pool. It chooses the backend
	// and tries the pool's other backends, all before a byte of the
	// answer is returned; it names the backend that answered in
	// UpstreamHeader. A pool that could not answer returns a response
	// with its status (429, 5xx) or an error.
	Transport http.RoundTripper
}

// ErrUnknownModel is returned by Stream, wrapped in an *Error with
// status 404, for a model the Router does not know.
var ErrUnknownModel = errors.New("model not configured")

// Served names what answered a Stream.
type Served struct {
	// Model is the configured model that answered: the request's, or
	// one of its fallbacks. Empty without a Router.
	Model string
	// Upstream names the backend that answered, as the Router's
	// transport reported it; empty when it did not say.
	Upstream string
	// Fallbacks is how many pools failed before the one that answered.
	Fallbacks int
}

// retryable reports whether a failed attempt on one pool may move on to
// the next: nothing of the answer was read yet, and the failure is the
// backend's (unreachable, 5xx, 429), not the request's (4xx) nor a
// timeout of the whole call.
func retryable(err error) bool {
	var ue *Error
	if !errors.As(err, &ue) || ue.Timeout {
		return false
	}
	return ue.Status == 0 || ue.Status == http.StatusTooManyRequests || ue.Status >= 500
}
