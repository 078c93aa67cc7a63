package postgres_test

import (
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

// The store serves the orchestrator's contracts without sqlstore
// importing the orchestrator, so they are checked here.
var (
	_ storage.Memory    = (*postgres.Store)(nil)
	_ storage.ObjectIDs = (*postgres.Store)(nil)
	_ storage.Usage     = (*postgres.Store)(nil)
)

func TestAssistantContract(t *testing.T) {
	storagetest.RunAssistant(t, open)
}
