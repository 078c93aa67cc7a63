package demobackend

import "time"

// DefaultModel is the model listed when Options.Models is empty.
const DefaultModel = "switchyard-demo"

// Options configure a Server. Each field other than Now, Ready, Answer,
// Observe and Served is one flag of `switchyard demo-backend`. The zero value is
// a backend without delays or authentication that lists DefaultModel,
// accepts any model and gives every request the demo answer.
type Options struct {
	// Models listed by GET /v1/models, in order. When set, a chat request
	// naming any other model is refused with 404 model_not_found, as
	// OpenAI and vLLM do. Default: empty, which lists DefaultModel and
	// accepts every model name (answers echo the requested name).
	Models []string

	// APIKey, when set, must arrive as "Authorization: Bearer APIKEY" on
	// every request; anything else is answered 401 invalid_api_key.
	// Default: empty, no authentication.
	APIKey string

	// TimeToFirstToken is how long a streamed answer waits before its first
	// chunk (and its response headers). A JSON answer waits this long plus
	// InterTokenDelay for every further token, as generation would.
	// Default: 0, answer at once.
	TimeToFirstToken time.Duration

	// InterTokenDelay is the pause before each streamed token after the
	// first, reasoning and tool-call argument pieces included.
	// Default: 0, no pause.
	InterTokenDelay time.Duration

	// Reasoning makes the demo answer begin with a short
	// reasoning_content part, as reasoning models served by vLLM do.
	// Replies from Answer are unaffected. Default: false.
	Reasoning bool

	// Now supplies the "created" timestamps. Not a flag. Default: time.Now.
	Now func() time.Time

	// Ready is called by ListenAndServe once the listener is bound, with
	// the base URL clients should use ("http://127.0.0.1:9000/v1"). Not a
	// flag. Default: nil, which prints
	// "demo backend listening on http://ADDR/v1" to standard error.
	Ready func(baseURL string)

	// Answer, when set, is asked for the reply to every chat request the
	// server accepts (valid, authorised, naming a known model); ok false
	// leaves the request to the demo answer. It is how the scripted
	// upstream of the tests (internal/testupstream) answers. It may be
	// called concurrently. Not a flag. Default: nil, the demo answer.
	Answer func(req *Request) (r Reply, ok bool)

	// Observe, when set, is called with every request as it arrives,
	// before it is answered, the unauthorised and invalid ones included.
	// The Header and Body it is given are the server's: read them, do not
	// modify them. It may be called concurrently. Not a flag. Default:
	// nil.
	Observe func(Request)

	// Served, when set, is called with every completion the server began
	// to answer with 200, once its handler returns: the usage the answer
	// reports and how much of it went out (see Served). It may be called
	// concurrently. Not a flag. Default: nil.
	Served func(Served)
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) models() []string {
	if len(o.Models) == 0 {
		return []string{DefaultModel}
	}
	return o.Models
}

// knowsModel reports whether a chat request may name model.
func (o *Options) knowsModel(model string) bool {
	if len(o.Models) == 0 {
		return true
	}
	for _, m := range o.Models {
		if m == model {
			return true
		}
	}
	return false
}
