package openurl

import (
	"context"
	"net/http"
	"testing"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// TestExtractionPanicFailsTheCallOnly: a page on which the HTML to
// Markdown conversion panics (a converter bug; here a renderer that
// panics) fails that call, in words the model can act on, and is
// counted; the process goes on.
func TestExtractionPanicFailsTheCallOnly(t *testing.T) {
	srv, _ := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body><p>Some text.</p></body></html>"))
	}))
	tool := New(Options{Allow: allowLoopback()})
	tool.conv.Register.PostRenderer(func(converter.Context, []byte) []byte { panic("converter bug") }, converter.PriorityEarly)
	before := guard.Count(extractGoroutine)
	_, err := tool.Execute(context.Background(), call(srv.URL+"/page", nil))
	wantCallError(t, err, "the page could not be read")
	if n := guard.Count(extractGoroutine) - before; n != 1 {
		t.Errorf("%d panics counted, want 1", n)
	}
}
