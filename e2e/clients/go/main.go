// Command recipe asks the /v3 assistant for a chart with openai-go, prints
// what the SDK's types leave out (activity, artifacts, search sources, the
// cost of the call) and downloads the chart by its file_id. docs/clients.md
// shows it; the e2e tests run it against the real binary.
//
//	SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... go run ./e2e/clients/go
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func main() {
	ctx := context.Background()
	client := openai.NewClient(
		option.WithBaseURL(os.Getenv("SWITCHYARD_BASE_URL")+"/v3/"), // "/v1/" for the pass-through
		option.WithAPIKey(os.Getenv("SWITCHYARD_KEY")),
		option.WithHeader("X-Include-Cost", "1"), // usage.cost_cents
	)

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "switchyard-demo",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Draw a chart of quarterly revenue")},
	})
	var text strings.Builder
	var fileIDs []string
	for stream.Next() {
		chunk := stream.Current()
		if len(chunk.Choices) > 0 {
			delta := chunk.Choices[0].Delta
			text.WriteString(delta.Content)
			// The /v3 keys are fields the SDK does not know: read them raw.
			for _, key := range []string{"act", "artifact", "search_sources"} {
				if f, ok := delta.JSON.ExtraFields[key]; ok {
					fmt.Printf("%s: %.120s\n", key, f.Raw())
				}
			}
			if f, ok := delta.JSON.ExtraFields["artifact"]; ok {
				var artifact struct {
					Type   string `json:"type"`
					FileID string `json:"file_id"`
				}
				if json.Unmarshal([]byte(f.Raw()), &artifact) == nil && artifact.FileID != "" {
					fileIDs = append(fileIDs, artifact.FileID)
				}
			}
		}
		if chunk.Usage.TotalTokens > 0 { // the last chunk
			fmt.Printf("usage: prompt=%d completion=%d cost_cents=%s\n", chunk.Usage.PromptTokens,
				chunk.Usage.CompletionTokens, chunk.Usage.JSON.ExtraFields["cost_cents"].Raw())
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *openai.Error // the gateway's error envelope
		if errors.As(err, &apiErr) {
			log.Fatalf("%d %s: %s", apiErr.StatusCode, apiErr.Code, apiErr.Message)
		}
		log.Fatal(err)
	}
	fmt.Println("text:", text.String())

	for _, id := range fileIDs {
		resp, err := client.Files.Content(ctx, id)
		if err != nil {
			log.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("downloaded %s: %d bytes of %s\n", id, len(b), resp.Header.Get("Content-Type"))
	}
}
