package postgres_test

import (
	"testing"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/storagetest"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/memory"
)

// The store serves the orchestrator's contracts without sqlstore
// importing the orchestrator, so they are checked here.
var (
	_ memory.Store       = (*postgres.Store)(nil)
	_ tools.IDAllocator  = (*postgres.Store)(nil)
	_ billing.UsageStore = (*postgres.Store)(nil)
)

func TestAssistantContract(t *testing.T) {
	storagetest.RunAssistant(t, func(t *testing.T, opts storage.Options) storagetest.AssistantStore {
		s, err := postgres.Open(t.Context(), databaseDSN(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
