package upstream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

// roundShape is a conversation as the orchestrator sends it: the service
// prompt, earlier turns of the client's conversation, and the newest user
// message, with an inline image or not.
type roundShape struct {
	name    string
	history int // earlier messages of the client's conversation
	image   int // bytes of an inline image in the newest message; 0 for none
}

var roundShapes = []roundShape{
	{name: "short chat"},
	{name: "long conversation", history: 200},
	{name: "1 MB image", image: 1 << 20},
}

// benchRounds is the orchestrator's default bound on rounds.
const benchRounds = 8

// BenchmarkRoundEncode builds the request bodies of one whole turn: the
// conversation, then benchRounds rounds, each but the first after the
// model's tool call and the tool's answer, the last offered no tools, as
// the orchestrator sends them. ns/round is the cost of one round.
func BenchmarkRoundEncode(b *testing.B) {
	var defs []ToolDefinition
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range tools.Schemas {
			if !yield(n) {
				return
			}
		}
	}) {
		defs = append(defs, ToolDefinition{Type: "function", Function: FunctionSpec{
			Name: name, Description: "Call " + name + " when the user asks for it.", Parameters: tools.Schemas[name]}})
	}
	sentence := "The quarterly figures show revenue up 4.2% against plan, with costs flat; the \"north\" region leads. "
	system := strings.Repeat(sentence, 40)
	result := strings.Repeat(sentence, 20)
	sampling := map[string]json.RawMessage{"temperature": json.RawMessage(`0.3`)}
	c := new(Client)
	for _, shape := range roundShapes {
		img := make([]byte, shape.image)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range img {
			img[i] = byte(rng.Uint32())
		}
		// The request's parse hands an inline image on as the base64 it
		// came in.
		b64 := base64.StdEncoding.EncodeToString(img)
		b.Run(shape.name, func(b *testing.B) {
			b.ReportAllocs()
			bytes := 0
			for b.Loop() {
				bytes = 0
				conv := NewConversation(Message{Role: "system", Content: system})
				for i := range shape.history {
					role := "user"
					if i%2 == 1 {
						role = "assistant"
					}
					conv.Append(Message{Role: role, Content: sentence[:80+i%20]})
				}
				if shape.image > 0 {
					conv.Append(Message{Role: "user", Parts: []Part{
						{Type: "text", Text: "What does this chart say?"},
						{Type: "image_url", ImageURL: &ImageURL{MIME: "image/png", Base64: b64}},
					}})
				} else {
					conv.Append(Message{Role: "user", Content: "Summarise last quarter and chart it."})
				}
				for round := 1; round <= benchRounds; round++ {
					if round > 1 {
						id := fmt.Sprintf("call_%d_0", round-1)
						conv.Append(
							Message{Role: "assistant", Content: "", ToolCalls: []ToolCall{{ID: id, Type: "function",
								Function: Function{Name: tools.NameWebSearch, Arguments: `{"query":"revenue north region"}`}}}},
							Message{Role: "tool", ToolCallID: id, Name: tools.NameWebSearch, Content: result})
					}
					req := Request{Model: "svc-3", Messages: conv, Sampling: sampling}
					if round < benchRounds {
						req.Tools = defs
					}
					for _, p := range c.encode(req, "served") {
						bytes += len(p)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRounds), "ns/round")
			b.ReportMetric(float64(bytes)/benchRounds, "B/body")
		})
	}
}
