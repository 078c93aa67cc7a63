package search

// Environment variables of the search providers, read when the config
// leaves a field empty. Part of the operator contract.
const (
	EnvSearchURL = "SWITCHYARD_SEARCH_URL"
	EnvBraveKey  = "SWITCHYARD_BRAVE_API_KEY"
	EnvTavilyKey = "SWITCHYARD_TAVILY_API_KEY"
)

// Settings choose the providers of the web_search tool. With none
// configured the tool is not offered. With several, a search that fails
// at one is tried at the next, in the order below.
type Settings struct {
	// Base URL of a SearxNG instance with the JSON format enabled; the
	// gateway calls GET {url}/search?q=...&format=json. Default:
	// $SWITCHYARD_SEARCH_URL, else none.
	SearxNG string `json:"searxng,omitempty"`
	// Brave Search API subscription token. Default:
	// $SWITCHYARD_BRAVE_API_KEY, else none.
	BraveKey string `json:"brave_key,omitempty"`
	// Tavily API key. Default: $SWITCHYARD_TAVILY_API_KEY, else none.
	TavilyKey string `json:"tavily_key,omitempty"`
}

// Config is the Config c and the environment select. lookup returns a
// configured value, its placeholders replaced, or when it is empty the
// environment variable env. c may be nil.
func (c *Settings) Config(lookup func(configured, env string) string) Config {
	if c == nil {
		c = new(Settings)
	}
	return Config{SearxNGURL: lookup(c.SearxNG, EnvSearchURL), BraveKey: lookup(c.BraveKey, EnvBraveKey), TavilyKey: lookup(c.TavilyKey, EnvTavilyKey)}
}
