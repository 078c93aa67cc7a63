package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

func openaiClient(g *gateway, key, prefix string) openai.Client {
	return openai.NewClient(
		option.WithAPIKey(key),
		option.WithBaseURL(g.base+prefix+"/"),
		option.WithMaxRetries(0),
	)
}

// isStatus reports whether err is the OpenAI client's error for an answer
// with status.
func isStatus(err error, status int) bool {
	var apiErr *openai.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == status
}

// errorBody decodes the error envelope, failing the test if body is not one.
func errorBody(t *testing.T, body string) (message, typ, code string) {
	t.Helper()
	var env struct {
		Error *struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil || env.Error == nil ||
		env.Error.Message == nil || env.Error.Type == nil || env.Error.Code == nil {
		t.Fatalf("not an error envelope: %q", body)
	}
	return *env.Error.Message, *env.Error.Type, *env.Error.Code
}

// wantError fails the test unless an answer to what is an error envelope
// with wantStatus, and with code and typ where they are not empty.
func wantError(t *testing.T, what string, status int, body string, wantStatus int, code, typ string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("%s: status %d, want %d: %.500s", what, status, wantStatus, body)
	}
	_, gotTyp, gotCode := errorBody(t, body)
	if (code != "" && gotCode != code) || (typ != "" && gotTyp != typ) {
		t.Errorf("%s: code %q type %q, want %q %q", what, gotCode, gotTyp, code, typ)
	}
}

func TestV1PassThroughWithOpenAIClient(t *testing.T) {
	up, _, key, g := fundedGateway(t, "acme", "SWITCHYARD_UPSTREAM_API_KEY", "upstream-secret")
	client := openaiClient(g, key, "/v1")
	ctx := context.Background()

	up.Enqueue(testupstream.Text("Hello from the upstream."))
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "any-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil {
		t.Fatalf("chat completion: %v", err)
	}
	if got := resp.Choices[0].Message.Content; got != "Hello from the upstream." {
		t.Errorf("content = %q", got)
	}
	if resp.Usage.TotalTokens == 0 {
		t.Error("usage did not pass through")
	}

	up.Enqueue(testupstream.Text("Streamed words arrive one by one."))
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         "any-model",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream please")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if got := acc.Choices[0].Message.Content; got != "Streamed words arrive one by one." || chunks < 3 {
		t.Errorf("streamed %d chunks with content %q", chunks, got)
	}
	if acc.Usage.TotalTokens == 0 {
		t.Error("include_usage chunk did not pass through")
	}

	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) == 0 {
		t.Fatalf("models: %v %+v", err, models)
	}

	reqs := up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("upstream saw %d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer upstream-secret" {
			t.Errorf("upstream got Authorization %q, want the upstream key and never the caller's", got)
		}
		if strings.Contains(strings.Join(r.Header.Values("Authorization"), ""), key) {
			t.Error("the caller's key reached the upstream")
		}
	}
	if reqs[0].Path != "/v1/chat/completions" || reqs[2].Path != "/v1/models" {
		t.Errorf("upstream paths %q, %q", reqs[0].Path, reqs[2].Path)
	}
}

func TestBadKeyWithOpenAIClient(t *testing.T) {
	up, e := scriptedEnv(t)
	g := startGateway(t, e)
	client := openaiClient(g, "sk-"+strings.Repeat("x", 48), "/v1")
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an API error", err)
	}
	if apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" || apiErr.Type != "invalid_request_error" {
		t.Errorf("status %d code %q type %q, want 401 invalid_api_key invalid_request_error", apiErr.StatusCode, apiErr.Code, apiErr.Type)
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("a refused request reached the upstream (%d requests)", n)
	}
}

func TestAuthenticationRefusals(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "acme")
	revoked := newKey(t, e, "acme")
	orphan := newKey(t, e, "doomed")
	g := startGateway(t, e)

	// Revoke one key and delete the other's account, then check both
	// are refused like unknown keys.
	var revokedID string
	for _, line := range strings.Split(mustCLI(t, e, "keys", "list", "--account", "acme").stdout, "\n") {
		if strings.Contains(line, revoked[len(revoked)-4:]) {
			revokedID = strings.Fields(line)[0]
		}
	}
	mustCLI(t, e, "keys", "revoke", revokedID)
	deleteAccount(t, e, "doomed")

	tests := []struct {
		name   string
		header string
	}{
		{"missing", ""},
		{"no scheme", key},
		{"scheme alone", "Bearer"},
		{"two spaces", "Bearer  " + key},
		{"basic", "Basic " + key},
		{"wrong prefix", "Bearer pk-" + key[3:]},
		{"too short", "Bearer " + key[:20]},
		{"too long", "Bearer " + key + strings.Repeat("a", 200)},
		{"unknown", "Bearer sk-" + strings.Repeat("Q", 48)},
		{"64 KiB", "Bearer sk-" + strings.Repeat("a", 64<<10)},
		{"revoked", "Bearer " + revoked},
		{"deleted account", "Bearer " + orphan},
	}
	for _, tt := range tests {
		for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions", "/v3/files"} {
			t.Run(tt.name+path, func(t *testing.T) {
				var hdr []string
				if tt.header != "" {
					hdr = []string{"Authorization", tt.header}
				}
				status, h, body := g.do("POST", path, "", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, hdr...)
				wantError(t, "POST "+path, status, body, http.StatusUnauthorized, "invalid_api_key", "invalid_request_error")
				if h.Get("Content-Type") != "application/json" {
					t.Errorf("Content-Type %q", h.Get("Content-Type"))
				}
				if len(tt.header) > 20 && strings.Contains(body, tt.header[7:]) {
					t.Error("the error echoes the presented key")
				}
			})
		}
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("refused requests reached the upstream (%d requests)", n)
	}
	if strings.Contains(g.log.String(), key) || strings.Contains(g.log.String(), revoked) {
		t.Error("a key appears in the gateway log")
	}

	// The valid key still works, with either case of the scheme.
	for _, scheme := range []string{"Bearer", "bearer"} {
		status, h, body := g.do("POST", "/v1/chat/completions", "", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			"Authorization", scheme+" "+key)
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", scheme, status, body)
		}
		if h.Get("X-Request-Id") == "" {
			t.Error("no X-Request-Id on the response")
		}
	}
}

func TestRoutesAnswerInTheEnvelope(t *testing.T) {
	_, _, key, g := fundedGateway(t, "acme")

	tests := []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"unknown v3 route", "GET", "/v3/nothing/here", 404, "route_not_found"},
		{"unknown root route", "GET", "/index.html", 404, "route_not_found"},
		{"chat without a body", "POST", "/v3/chat/completions", 400, "invalid_json"},
		{"chat with GET", "GET", "/v3/chat/completions", 405, "method_not_allowed"},
		{"files with PUT", "PUT", "/v3/files", 405, "method_not_allowed"},

		{"unknown file", "GET", "/v3/files/file-abc", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := g.do(tt.method, tt.path, key, "")
			wantError(t, tt.method+" "+tt.path, status, body, tt.status, tt.code, "")
		})
	}
}

// TestAnyHostIsServed: the shipped Caddyfile serves the API whatever Host
// the client names (a load balancer's public name, localhost), not only
// the listening address; Caddy answers a site it has no route for with
// an empty 200.
func TestAnyHostIsServed(t *testing.T) {
	_, _, key, g := fundedGateway(t, "acme")
	for _, host := range []string{"api.example.com", "localhost", "localhost:1"} {
		send := func(key string) (int, string) {
			req := newRequest(t, g, "GET", "/v1/models", key, "")
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		status, body := send("")
		wantError(t, "no key, Host "+host, status, body, http.StatusUnauthorized, "invalid_api_key", "invalid_request_error")
		if status, body := send(key); status != http.StatusOK || !strings.Contains(body, `"data"`) {
			t.Errorf("Host %s: %d %s", host, status, body)
		}
	}
}

func TestRequestIDIsEchoed(t *testing.T) {
	up, _, key, g := fundedGateway(t, "acme")

	_, h, _ := g.do("GET", "/v1/models", key, "", "X-Request-Id", "client-chosen-42")
	if got := h.Get("X-Request-Id"); got != "client-chosen-42" {
		t.Errorf("X-Request-Id = %q, want the caller's", got)
	}
	if got := up.Requests()[0].Header.Get("X-Request-Id"); got != "client-chosen-42" {
		t.Errorf("upstream saw X-Request-Id %q", got)
	}
	_, h, _ = g.do("GET", "/v1/models", key, "", "X-Request-Id", "bad id with spaces")
	if got := h.Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Errorf("X-Request-Id = %q, want a fresh id in place of a malformed one", got)
	}
}

// TestChargeIDIsNotHandedOut: a request that brings no X-Request-Id gets
// an id of its own, echoed and sent upstream, which is not its charge id:
// the ledger's reference of its charge appears nowhere in what the client
// or the upstream receives, on /v1 and /v3.
func TestChargeIDIsNotHandedOut(t *testing.T) {
	up, e, key, g := fundedGateway(t, "acme")
	up.Respond(func(*demobackend.Request) (demobackend.Reply, bool) { return testupstream.Text("Fine."), true })
	var seen []string // everything the client and the upstream received
	var ids []string
	for _, path := range []string{"/v1/chat/completions", "/v3/chat/completions"} {
		for _, body := range []string{chatBody, streamBody} {
			status, h, out := g.do("POST", path, key, body)
			if status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, status, out)
			}
			id := h.Get("X-Request-Id")
			if id == "" {
				t.Fatalf("%s: no X-Request-Id", path)
			}
			ids = append(ids, id)
			seen = append(seen, fmt.Sprint(h), out)
		}
	}
	for _, r := range up.Requests() {
		seen = append(seen, fmt.Sprint(r.Header), string(r.Body))
	}
	got := charges(t, e, "acme")
	if len(got) != len(ids) {
		t.Fatalf("%d charges for %d requests", len(got), len(ids))
	}
	all := strings.Join(seen, "\n")
	for _, le := range got {
		chargeID := strings.TrimPrefix(le.Reference, "req:")
		if slices.Contains(ids, chargeID) {
			t.Errorf("the charge %s was echoed as X-Request-Id", le.Reference)
		}
		if strings.Contains(all, chargeID) {
			t.Errorf("the charge id %s reached the client or the upstream", chargeID)
		}
	}
}

func TestUnreachableUpstream(t *testing.T) {
	e := embeddedEnv(t, "http://"+testenv.FreeAddr(t)+"/v1")
	key := fundedKey(t, e, "acme")
	g := startGateway(t, e)
	status, _, body := g.do("POST", "/v1/chat/completions", key, `{"model":"m","messages":[]}`)
	wantError(t, "chat with the upstream down", status, body, http.StatusBadGateway, "upstream_unavailable", "server_error")
}

func TestPlaceholdersForLaterHandlers(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "Caddyfile")
	err := os.WriteFile(cfg, []byte(`{
	admin {$SWITCHYARD_ADMIN}
}
http://{$SWITCHYARD_LISTEN} {
	bind {$SWITCHYARD_LISTEN}
	route {
		switchyard_auth
		respond "{switchyard.account}|{switchyard.account_id}|{switchyard.key_id}|{switchyard.key_hint}|{switchyard.request_id}|{http.request.header.Authorization}"
	}
}
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	e := embeddedEnv(t, "http://127.0.0.1:1/v1")
	key := newKey(t, e, "placeholder-co")
	g := startGateway(t, e, cfg)
	status, _, body := g.do("GET", "/anything", key, "", "X-Request-Id", "rid-7")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	parts := strings.Split(body, "|")
	if len(parts) != 6 {
		t.Fatalf("body %q", body)
	}
	if parts[0] != "placeholder-co" || !strings.HasPrefix(parts[1], "acct_") || !strings.HasPrefix(parts[2], "key_") ||
		parts[3] != "sk-..."+key[len(key)-4:] || parts[4] != "rid-7" {
		t.Errorf("placeholders: %q", parts)
	}
	if parts[5] != "" {
		t.Errorf("the Authorization header survived authentication: %q", parts[5])
	}
}
