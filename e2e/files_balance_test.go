package e2e

import (
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// Storage has no fee (spec section 8): an account without balance can
// still upload a file, while a chat request, which costs money, is
// refused at the balance gate.
func TestZeroBalanceUploadsFiles(t *testing.T) {
	scriptedBackends(t, func(t *testing.T, up *testupstream.Server, e env) {
		key := newKey(t, e, "penniless")
		g := startGateway(t, e)

		status, _, body := g.do("POST", "/v3/files", key, multipartBody("B", "notes.txt", "Storage is free."),
			"Content-Type", "multipart/form-data; boundary=B")
		if status != http.StatusOK {
			t.Fatalf("upload with a zero balance: %d %s", status, body)
		}
		status, _, body = g.do("POST", "/v3/chat/completions", key, chatBody)
		wantError(t, "chat with a zero balance", status, body, http.StatusPaymentRequired, "insufficient_balance", "")
		if n := len(up.Requests()); n != 0 {
			t.Errorf("%d requests reached the upstream", n)
		}
	})
}
