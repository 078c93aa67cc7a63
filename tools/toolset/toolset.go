// Package toolset builds the tools a server offers to the upstream model
// from its configuration. It is the one place where a tool is registered
// with the capability (output mode) that decides when it is offered; see
// "Adding a tool" in docs/architecture.md.
package toolset

import (
	"fmt"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/artifacts"
	"github.com/switchyardhq/switchyard/tools/memory"
	"github.com/switchyardhq/switchyard/tools/openurl"
	"github.com/switchyardhq/switchyard/tools/search"
)

// Config is what the tools need from the server.
type Config struct {
	// Memory keeps end users' facts for remember. Required.
	Memory storage.Memory
	// Search configures web_search's providers. With none, web_search
	// is not offered.
	Search search.Config
	// OpenURL configures open_url, which is always offered (the mode
	// decides to whom).
	OpenURL openurl.Options
	// Artifacts configures the deliverable tools (create_*,
	// update_object, delete_object). Without a file store they are not
	// offered.
	Artifacts artifacts.Config
}

// New returns the registry of every tool cfg allows.
func New(cfg Config) (*tools.Registry, error) {
	if cfg.Memory == nil {
		return nil, fmt.Errorf("toolset: no memory store")
	}
	reg := new(tools.Registry)
	add := func(c tools.Capability, t tools.Tool) error {
		if err := reg.Register(c, t); err != nil {
			return fmt.Errorf("toolset: %v", err)
		}
		return nil
	}
	if err := add(tools.EndUserMemory, &memory.Tool{Store: cfg.Memory}); err != nil {
		return nil, err
	}
	provider, err := search.FromConfig(cfg.Search)
	if err != nil {
		return nil, fmt.Errorf("toolset: web search: %v", err)
	}
	if provider != nil {
		if err := add(tools.WebSearch, search.New(provider, search.Options{})); err != nil {
			return nil, err
		}
	}
	if err := add(tools.OpenURL, openurl.New(cfg.OpenURL)); err != nil {
		return nil, err
	}
	if cfg.Artifacts.Files != nil {
		made, err := artifacts.New(cfg.Artifacts)
		if err != nil {
			return nil, fmt.Errorf("toolset: %v", err)
		}
		for _, t := range made {
			if err := add(tools.FileOutput, t); err != nil {
				return nil, err
			}
		}
	}
	return reg, nil
}
