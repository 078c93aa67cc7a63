package translator

import "testing"

func TestToolSettings(t *testing.T) {
	var cfg Config
	(*ToolSettings)(nil).Apply(&cfg)
	if cfg.MaxToolCallsPerRound != 0 || cfg.RenderConcurrency != 0 {
		t.Errorf("unset settings changed the defaults: %d, %d", cfg.MaxToolCallsPerRound, cfg.RenderConcurrency)
	}
	(&ToolSettings{MaxToolCalls: 3, RenderConcurrency: 1}).Apply(&cfg)
	if cfg.MaxToolCallsPerRound != 3 || cfg.RenderConcurrency != 1 {
		t.Errorf("Apply: %d, %d", cfg.MaxToolCallsPerRound, cfg.RenderConcurrency)
	}
	if (&ToolSettings{MaxToolCalls: -1}).Validate() == nil || (&ToolSettings{RenderConcurrency: -1}).Validate() == nil {
		t.Error("negative bounds passed")
	}
}
