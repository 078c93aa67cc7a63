package translator

import "fmt"

// ToolSettings bound what the tools of /v3 chat completions may cost.
type ToolSettings struct {
	// Most tool calls run from one answer of the model. Calls past it
	// are not run: each is answered to the model as an error saying so.
	// Default: 8.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`

	// Most calls of file-output tools (create_*, update_object,
	// delete_object) one account runs at once, across its concurrent
	// requests to one switchyard_chat handler on this node. A call past
	// it waits for one of them to finish, within tool_timeout. Default: 2.
	RenderConcurrency int `json:"render_concurrency,omitempty"`
}

// Validate checks what JSON decoding cannot; c may be nil.
func (c *ToolSettings) Validate() error {
	if c == nil {
		return nil
	}
	switch {
	case c.MaxToolCalls < 0:
		return fmt.Errorf("tools: max_tool_calls %d is negative", c.MaxToolCalls)
	case c.RenderConcurrency < 0:
		return fmt.Errorf("tools: render_concurrency %d is negative", c.RenderConcurrency)
	}
	return nil
}

// Apply sets the bounds c configures on cfg, whose zero values are the
// defaults; c may be nil.
func (c *ToolSettings) Apply(cfg *Config) {
	if c != nil {
		cfg.MaxToolCallsPerRound, cfg.RenderConcurrency = c.MaxToolCalls, c.RenderConcurrency
	}
}
