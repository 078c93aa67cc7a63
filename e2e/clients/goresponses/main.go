// Command recipe asks the /v3 assistant for a chart through openai-go's
// Responses client, prints the /v3 events the SDK's types leave out
// (activity, artifacts, search sources) and the cost of the call, and
// downloads the chart by its file_id. docs/clients.md shows it; the e2e
// tests run it against the real binary.
//
//	SWITCHYARD_BASE_URL=http://127.0.0.1:8080 SWITCHYARD_KEY=sk-... go run ./e2e/clients/goresponses
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

func main() {
	ctx := context.Background()
	client := openai.NewClient(
		option.WithBaseURL(os.Getenv("SWITCHYARD_BASE_URL")+"/v3/"),
		option.WithAPIKey(os.Getenv("SWITCHYARD_KEY")),
		option.WithHeader("X-Include-Cost", "1"), // usage.cost_cents
	)

	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "switchyard-demo",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Draw a chart of quarterly revenue")},
	})
	var fileIDs []string
	for stream.Next() {
		event := stream.Current()
		switch {
		case event.Type == "response.output_text.delta":
			// The text, as from any Responses server.
		case strings.HasPrefix(event.Type, "response.switchyard."):
			// A /v3 key, in an event of its own: read it raw.
			fmt.Printf("%s: %.120s\n", strings.TrimPrefix(event.Type, "response.switchyard."), event.RawJSON())
			if event.Type == "response.switchyard.artifact" {
				var e struct {
					Artifact struct {
						Type   string `json:"type"`
						FileID string `json:"file_id"`
					} `json:"artifact"`
				}
				if json.Unmarshal([]byte(event.RawJSON()), &e) == nil && e.Artifact.FileID != "" {
					fileIDs = append(fileIDs, e.Artifact.FileID)
				}
			}
		case event.Type == "response.completed":
			resp := event.AsResponseCompleted().Response
			fmt.Println("text:", resp.OutputText())
			fmt.Printf("usage: input=%d output=%d cost_cents=%s\n", resp.Usage.InputTokens,
				resp.Usage.OutputTokens, resp.Usage.JSON.ExtraFields["cost_cents"].Raw())
		}
	}
	if err := stream.Err(); err != nil {
		log.Fatal(err) // an error event after the stream began ends it here
	}

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
