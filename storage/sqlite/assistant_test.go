package sqlite_test

import (
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

// The store serves the orchestrator's contracts without sqlstore
// importing the orchestrator, so they are checked here.
var (
	_ storage.Memory    = (*sqlstore.Store)(nil)
	_ storage.ObjectIDs = (*sqlstore.Store)(nil)
	_ storage.Usage     = (*sqlstore.Store)(nil)
)

func TestAssistantContract(t *testing.T) {
	storagetest.RunAssistant(t, open)
}
