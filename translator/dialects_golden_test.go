package translator

import (
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestDialectGoldens runs every recorded backend answer
// (translator/upstream/testdata/dialects) through the orchestrator as the
// first round of a turn, the way TestGoldenTranscripts runs the scripted
// ones, and keeps each transcript as testdata/dialect_<file>.golden: tool
// calls become artifacts (parallel ones too), reasoning never shows, and a
// stream the backend broke ends in stream_interrupted.
func TestDialectGoldens(t *testing.T) {
	for _, rec := range testupstream.Recordings(t) {
		name := "dialect_" + strings.NewReplacer(".", "_", "-", "_").Replace(rec.File)
		t.Run(name, func(t *testing.T) {
			tc := goldenCase{
				name: name, stream: true, tools: []registeredTool{documentTool()},
				wantContent: rec.Text, wantUsage: true,
			}
			h := newHarness(t, harnessOptions{revision: tc.revision, tools: tc.tools})
			h.up.Enqueue(h.up.Replay(rec))
			if len(rec.ToolCalls) > 0 {
				h.up.Enqueue(testupstream.Text("Done."))
				if tc.wantContent != "" {
					tc.wantContent += "\n\n" // the rounds' texts are paragraphs
				}
				tc.wantContent += "Done."
			}
			if rec.Error != "" {
				tc.wantError, tc.wantUsage = "stream_interrupted", false
			}
			r := h.do(chatBody(tc.stream, "Write it down.", tc.extra), withUser(tc.headers))
			checkGoldenResult(t, h, tc, r)
			if rec.Reasoning != "" && strings.Contains(r.body, rec.Reasoning) {
				t.Errorf("the reasoning reached the client")
			}
			if n := strings.Count(r.body, `"artifact":{`); n != len(rec.ToolCalls) {
				t.Errorf("%d artifacts for %d tool calls", n, len(rec.ToolCalls))
			}
		})
	}
}
