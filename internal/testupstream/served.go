package testupstream

import "github.com/switchyardhq/switchyard/internal/demobackend"

// Served returns every completion served since the server started or was
// last Reset, in the order they ended (demobackend.Served: the usage each
// answer reports and how much of it went out).
func (s *Server) Served() []demobackend.Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]demobackend.Served(nil), s.served...)
}

// ServedTotals sums Served: the completions, and the prompt and completion
// tokens their answers report.
func (s *Server) ServedTotals() (completions int, promptTokens, completionTokens int64) {
	for _, sv := range s.Served() {
		completions++
		promptTokens += int64(sv.Usage.PromptTokens)
		completionTokens += int64(sv.Usage.CompletionTokens)
	}
	return completions, promptTokens, completionTokens
}

func (s *Server) recordServed(sv demobackend.Served) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served = append(s.served, sv)
}
