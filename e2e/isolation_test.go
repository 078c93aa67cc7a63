package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestAccountIsolation gives account A an uploaded file, a generated
// chart (its file and object obj1) and a remembered fact about its end
// user u1, then lets account B try each of them through every endpoint
// that takes such an identifier. B must get exactly the answer it gets
// for an identifier that exists nowhere, and none of A's data, either in
// the answer or in what reaches the model.
func TestAccountIsolation(t *testing.T) {
	scriptedBackends(t, func(t *testing.T, up *testupstream.Server, e env) {
		e = e.with("SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("i", 40))
		iso := &isolation{
			t:    t,
			up:   up,
			keyA: fundedKey(t, e, "iso-a"),
			keyB: fundedKey(t, e, "iso-b"),
			sent: map[string]int{},
		}
		iso.g = startGateway(t, e)
		iso.run(t, e)
	})
}

// A's data, which B must never see.
const (
	secretUploadName = "alpha-ledger.csv"
	secretUploadText = "alpha-secret-upload,4242\n"
	secretChartTitle = "Alpha confidential revenue"
	secretChartLabel = "AlphaQ1"
	secretFact       = "alpha-secret-fact: the vault code is 9137"
	betaFact         = "beta-own-fact: prefers tea"
)

const alphaChart = `{"title":"` + secretChartTitle + `","spec":{"type":"bar","labels":["` + secretChartLabel + `","AlphaQ2"],"series":[{"name":"alpha","values":[3,5]}]}}`

// betaSpec is a chart B makes up for the objects it echoes.
const betaSpec = `{"type":"bar","labels":["B1","B2"],"series":[{"name":"beta","values":[7,9]}]}`

// isolation is one deployment with the two accounts and what A made.
type isolation struct {
	t          *testing.T
	g          *gateway
	up         *testupstream.Server
	keyA, keyB string

	// A's identifiers and the strings that give A's data away.
	uploadA, chartFileA string
	secrets             []string
	// B's own files, on either side of A's ids.
	earlyB, lateB string

	// sent counts the /v3 requests each key made that reached the model
	// and were answered, overall and ("key/u1") for end user u1.
	sent map[string]int
}

// ghostID is an id of the same shape as id, which no account has, and
// which sorts next to id, so that as a list cursor it is the same
// position.
func ghostID(id string) string {
	last := id[len(id)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return id[:len(id)-1] + string(repl)
}

func (s *isolation) upload(key, name, content string) string {
	s.t.Helper()
	status, _, body := s.g.do("POST", "/v3/files", key, multipartBody("B", name, content),
		"Content-Type", "multipart/form-data; boundary=B")
	if status != 200 {
		s.t.Fatalf("upload %s: %d %s", name, status, body)
	}
	var f struct{ ID string }
	if err := json.Unmarshal([]byte(body), &f); err != nil || f.ID == "" {
		s.t.Fatalf("upload %s: %v %s", name, err, body)
	}
	return f.ID
}

// chat sends a /v3 request with key, streaming unless req says
// otherwise, and returns the status,
// the stream and the requests it made to the model.
func (s *isolation) chat(t *testing.T, key string, req map[string]any, header ...string) (int, string, []*demobackend.ChatRequest) {
	t.Helper()
	req["model"] = "svc-3"
	if _, ok := req["stream"]; !ok {
		req["stream"] = true
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	before := len(s.up.ChatRequests())
	status, out := v3Stream(t, s.g, key, string(body), header...)
	sent := s.up.ChatRequests()[before:]
	if status == 200 && len(sent) > 0 {
		s.sent[key]++
		if req["user"] == "u1" || hasHeader(header, "X-User-Id", "u1") {
			s.sent[key+"/u1"]++
		}
	}
	return status, out, sent
}

func hasHeader(kv []string, k, v string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == k && kv[i+1] == v {
			return true
		}
	}
	return false
}

// asB is chat with B's key that also fails the test if anything of A's
// reached the model or the answer. allowed is an identifier of A's that
// B named itself, and may see echoed.
func (s *isolation) asB(t *testing.T, req map[string]any, allowed string, header ...string) (int, string, []*demobackend.ChatRequest) {
	t.Helper()
	status, out, sent := s.chat(t, s.keyB, req, header...)
	s.noLeak(t, "the answer", out, allowed)
	for i, r := range sent {
		b, _ := json.Marshal(r)
		s.noLeak(t, fmt.Sprintf("model request %d", i+1), string(b), allowed)
	}
	return status, out, sent
}

// noLeak fails t if text holds any of A's data other than allowed.
func (s *isolation) noLeak(t *testing.T, what, text, allowed string) {
	t.Helper()
	if allowed != "" {
		text = strings.ReplaceAll(text, allowed, "{id}")
	}
	for _, secret := range s.secrets {
		if strings.Contains(text, secret) {
			t.Errorf("LEAK: %s to account B holds account A's %q:\n%.2000s", what, secret, text)
		}
	}
}

// answer is what a client can tell from a response, with the id it
// asked about replaced by {id}.
type answer struct {
	status             int
	typ, code, message string
	body               string // a success's body
}

func (s *isolation) answer(t *testing.T, method, path, key, id string) answer {
	t.Helper()
	status, _, body := s.g.do(method, path, key, "")
	return decodeAnswer(t, status, body, id)
}

func decodeAnswer(t *testing.T, status int, body, id string) answer {
	t.Helper()
	a := answer{status: status}
	if status >= 400 {
		a.message, a.typ, a.code = errorBody(t, body)
		a.message = strings.ReplaceAll(a.message, id, "{id}")
		return a
	}
	a.body = strings.ReplaceAll(body, id, "{id}")
	return a
}

func (s *isolation) run(t *testing.T, e env) {
	s.earlyB = s.upload(s.keyB, "beta-early.txt", "beta early")
	s.setUpA(t)
	s.lateB = s.upload(s.keyB, "beta-late.txt", "beta late")

	_, _, listA := s.g.do("GET", "/v3/files", s.keyA, "")
	contentA := map[string]string{}
	for _, id := range []string{s.uploadA, s.chartFileA} {
		_, _, contentA[id] = s.g.do("GET", "/v3/files/"+id+"/content", s.keyA, "")
	}
	// A's files are as they were: listed, downloadable, unchanged.
	checkA := func(t *testing.T) {
		t.Helper()
		if _, _, list := s.g.do("GET", "/v3/files", s.keyA, ""); list != listA {
			t.Errorf("LEAK: account A's file list changed after account B's requests:\nbefore %s\nafter  %s", listA, list)
		}
		for id, want := range contentA {
			if status, _, got := s.g.do("GET", "/v3/files/"+id+"/content", s.keyA, ""); status != 200 || got != want {
				t.Errorf("LEAK: account A's file %s changed after account B's requests: %d, %d bytes, want %d", id, status, len(got), len(want))
			}
		}
	}

	t.Run("files API", func(t *testing.T) { s.filesAPI(t) })
	t.Run("A's files after B's deletes", checkA)
	t.Run("input_file", func(t *testing.T) { s.inputFile(t) })
	t.Run("objects", func(t *testing.T) { s.objects(t) })
	t.Run("A's files after B's object edits", checkA)
	t.Run("object counters", func(t *testing.T) { s.counters(t) })
	t.Run("memory", func(t *testing.T) { s.memory(t) })
	t.Run("usage", func(t *testing.T) { s.usage(t, e) })
	t.Run("admin API", func(t *testing.T) { s.adminAPI(t, e) })
}

// adminAPI gives B's owner an admin token for iso-b and tries A's account
// and A's identifiers through every admin endpoint that takes them: each
// must answer exactly as for an account or id that does not exist, and
// A's key must still work afterwards.
func (s *isolation) adminAPI(t *testing.T, e env) {
	settleLedgers(t) // A's balance must not move for its own charges meanwhile
	tokenB := mustCLI(t, e, "admin", "token", "--account", "iso-b", "--subject", "owner@iso-b").lastLine()
	operator := mustCLI(t, e, "admin", "token", "--operator").lastLine()
	var keysA struct {
		Data []struct{ ID string } `json:"data"`
	}
	if status, _, body := s.g.do("GET", "/admin/accounts/iso-a/keys", operator, ""); status != 200 || json.Unmarshal([]byte(body), &keysA) != nil || len(keysA.Data) == 0 {
		t.Fatalf("A's keys for the operator: %d %s", status, body)
	}
	keyIDA := keysA.Data[0].ID
	balanceA := func() int64 {
		var a struct {
			BalanceCents int64 `json:"balance_cents"`
		}
		if status, _, body := s.g.do("GET", "/admin/accounts/iso-a", operator, ""); status != 200 || json.Unmarshal([]byte(body), &a) != nil {
			t.Fatalf("A's account for the operator: %d %s", status, body)
		}
		return a.BalanceCents
	}
	before := balanceA()
	_, _, filesBefore := s.g.do("GET", "/v3/files", s.keyA, "")

	// Another account's name answers as a name no account has.
	foreignAccount := []struct{ method, path, body string }{
		{"GET", "/admin/accounts/%s", ""},
		{"GET", "/admin/accounts/%s/keys", ""},
		{"POST", "/admin/accounts/%s/keys", `{"label":"stolen"}`},
		{"DELETE", "/admin/accounts/%s/keys/" + keyIDA, ""},
		{"POST", "/admin/accounts/%s/topups", `{"usd":"5.00"}`},
		{"GET", "/admin/accounts/%s/ledger", ""},
		{"GET", "/admin/accounts/%s/usage?by=day", ""},
		{"GET", "/admin/accounts/%s/files", ""},
		{"DELETE", "/admin/accounts/%s/files/" + s.uploadA, ""},
	}
	for _, ep := range foreignAccount {
		name := strings.NewReplacer("%s", "{account}", keyIDA, "{key}", s.uploadA, "{file}").Replace(ep.path)
		t.Run(ep.method+" "+name, func(t *testing.T) {
			status, _, body := s.g.do(ep.method, fmt.Sprintf(ep.path, "iso-a"), tokenB, ep.body)
			got := decodeAnswer(t, status, strings.ReplaceAll(body, "iso-a", "{account}"), "{account}")
			status, _, body = s.g.do(ep.method, fmt.Sprintf(ep.path, "iso-ghost"), tokenB, ep.body)
			want := decodeAnswer(t, status, strings.ReplaceAll(body, "iso-ghost", "{account}"), "{account}")
			if got != want || got.status != 404 {
				t.Errorf("LEAK: B's token on A's account answers %+v, on an account that does not exist %+v", got, want)
			}
			s.noLeak(t, "admin answer", got.body+got.message, "")
		})
	}

	// A's identifiers under B's own account answer as ids that exist nowhere.
	foreignID := []struct{ name, path, id string }{
		{"key", "/admin/accounts/iso-b/keys/", keyIDA},
		{"file", "/admin/accounts/iso-b/files/", s.uploadA},
		{"generated file", "/admin/accounts/iso-b/files/", s.chartFileA},
	}
	for _, tt := range foreignID {
		t.Run("DELETE own account, A's "+tt.name, func(t *testing.T) {
			got := s.answer(t, "DELETE", tt.path+tt.id, tokenB, tt.id)
			ghost := ghostID(tt.id)
			want := s.answer(t, "DELETE", tt.path+ghost, tokenB, ghost)
			if got != want || got.status != 404 {
				t.Errorf("LEAK: deleting A's %s under B's account answers %+v, a missing one %+v", tt.name, got, want)
			}
		})
	}

	// B's calls changed nothing of A's: its key works, its files are all
	// there and its balance took no top-up.
	if status, _, files := s.g.do("GET", "/v3/files", s.keyA, ""); status != 200 || files != filesBefore {
		t.Errorf("LEAK: A's files after B's admin calls: %d\nbefore %s\nafter  %s", status, filesBefore, files)
	}
	if status, _, ledger := s.g.do("GET", "/admin/accounts/iso-a/ledger", operator, ""); status != 200 || strings.Contains(ledger, "owner@iso-b") {
		t.Errorf("LEAK: A's ledger after B's admin calls: %d %s", status, ledger)
	}
	if after := balanceA(); after != before {
		t.Errorf("LEAK: A's balance moved from %d to %d cents through B's admin calls", before, after)
	}
}

// setUpA gives A an upload, a chart and a remembered fact.
func (s *isolation) setUpA(t *testing.T) {
	s.uploadA = s.upload(s.keyA, secretUploadName, secretUploadText)

	s.up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "create_chart", Arguments: alphaChart}),
		testupstream.Text("Here is the chart."),
	)
	status, stream, _ := s.chat(t, s.keyA, map[string]any{"messages": userSays("A chart please")})
	arts := deltaKey(t, stream, "artifact")
	if status != 200 || len(arts) != 1 || arts[0]["object_id"] != "obj1" {
		t.Fatalf("A's chart: %d, artifacts %v:\n%.2000s", status, arts, stream)
	}
	s.chartFileA, _ = arts[0]["file_id"].(string)
	if s.chartFileA == "" {
		t.Fatalf("A's chart has no file_id: %v", keysOf(arts[0]))
	}

	s.up.Enqueue(
		testupstream.ToolCalls(demobackend.ToolCall{Name: "remember", Arguments: `{"fact":"` + secretFact + `"}`}),
		testupstream.Text("Noted."),
	)
	if status, stream, _ := s.chat(t, s.keyA, map[string]any{"user": "u1", "messages": userSays("Remember the vault code")}); status != 200 {
		t.Fatalf("A's remember: %d %s", status, stream)
	}
	s.secrets = []string{secretUploadName, strings.TrimSpace(secretUploadText), secretChartTitle, secretChartLabel,
		secretFact, s.uploadA, s.chartFileA}
}

func userSays(text string) []map[string]any {
	return []map[string]any{{"role": "user", "content": text}}
}

func (s *isolation) filesAPI(t *testing.T) {
	endpoints := []struct {
		name, method, path string
		// listsB is B's file a cursor at A's id must list: the cursor
		// is a position among B's files, nothing more.
		listsB *string
	}{
		{"get", "GET", "/v3/files/%s", nil},
		{"content", "GET", "/v3/files/%s/content", nil},
		{"delete", "DELETE", "/v3/files/%s", nil},
		{"list after", "GET", "/v3/files?after=%s", &s.earlyB},
		{"list after ascending", "GET", "/v3/files?order=asc&after=%s", &s.lateB},
	}
	files := []struct{ name, id string }{
		{"uploaded", s.uploadA},
		{"generated", s.chartFileA},
	}
	for _, f := range files {
		for _, ep := range endpoints {
			t.Run(f.name+"/"+ep.name, func(t *testing.T) {
				ghost := ghostID(f.id)
				got := s.answer(t, ep.method, fmt.Sprintf(ep.path, url.PathEscape(f.id)), s.keyB, f.id)
				want := s.answer(t, ep.method, fmt.Sprintf(ep.path, url.PathEscape(ghost)), s.keyB, ghost)
				if got != want {
					t.Errorf("LEAK: B's %s %s with A's %s tells it apart from a file that does not exist:\nA's id: %+v\nnone:   %+v",
						ep.method, ep.path, f.name, got, want)
				}
				s.noLeak(t, ep.name, got.body+got.message, "")
				if ep.listsB != nil {
					if got.status != 200 || !strings.Contains(got.body, *ep.listsB) {
						t.Errorf("the cursor at A's id did not list B's own file %s: %+v", *ep.listsB, got)
					}
				} else if got.status != 404 || got.code != "not_found" {
					t.Errorf("B's %s of A's file: %+v, want 404 not_found", ep.name, got)
				}
			})
		}
	}
}

func (s *isolation) inputFile(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		stream bool
	}{
		{"uploaded, streaming", s.uploadA, true},
		{"uploaded, JSON", s.uploadA, false},
		{"generated, streaming", s.chartFileA, true},
		{"generated, JSON", s.chartFileA, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ask := func(id string) (answer, int) {
				req := map[string]any{"stream": tt.stream, "messages": []map[string]any{{"role": "user", "content": []map[string]any{
					{"type": "text", "text": "What does the file say?"},
					{"type": "input_file", "file_id": id},
				}}}}
				// Nothing is queued: were the request to reach the model,
				// the demo answer would do.
				status, out, sent := s.asB(t, req, id)
				return decodeAnswer(t, status, out, id), len(sent)
			}
			got, reached := ask(tt.id)
			want, _ := ask(ghostID(tt.id))
			if got != want {
				t.Errorf("LEAK: B naming A's file as input_file is told apart from a file that does not exist:\nA's id: %+v\nnone:   %+v", got, want)
			}
			if got.status != 404 || got.code != "file_not_found" || reached != 0 {
				t.Errorf("B naming A's file: %+v with %d model requests, want 404 file_not_found before the model", got, reached)
			}
		})
	}
}

func (s *isolation) objects(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args string // %s is the object id
	}{
		{"update A's obj1, not in B's objects", "update_object", `{"object_id":"%s","spec":` + betaSpec + `}`},
		{"delete A's obj1, not in B's objects", "delete_object", `{"object_id":"%s"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// try runs B's request with the tool called on id and returns
			// the tool's answer to the model, with id replaced by {id}.
			try := func(id string) (string, []map[string]any, []map[string]any) {
				s.up.Enqueue(
					testupstream.ToolCalls(demobackend.ToolCall{Name: tt.tool, Arguments: fmt.Sprintf(tt.args, id)}),
					testupstream.Text("Done."),
				)
				status, stream, sent := s.asB(t, map[string]any{"messages": userSays("Change " + id)}, "")
				if status != 200 || len(sent) != 2 {
					t.Fatalf("%d with %d model requests:\n%.2000s", status, len(sent), stream)
				}
				var result string
				for _, m := range sent[1].Messages {
					if m.Role == "tool" {
						result = m.Text()
					}
				}
				if result == "" {
					t.Fatalf("no tool result reached the model: %+v", sent[1].Messages)
				}
				return strings.ReplaceAll(result, id, "{id}"), deltaKey(t, stream, "artifact"), deltaKey(t, stream, "artifact_remove")
			}
			result, arts, removed := try("obj1")
			ghostResult, ghostArts, ghostRemoved := try("obj7")
			if result != ghostResult || len(arts) != len(ghostArts) || len(removed) != len(ghostRemoved) {
				t.Errorf("LEAK: B's %s of A's obj1 is told apart from an object nobody has:\nobj1: %q, %d artifacts, %d removals\nobj7: %q, %d artifacts, %d removals",
					tt.tool, result, len(arts), len(removed), ghostResult, len(ghostArts), len(ghostRemoved))
			}
			if len(arts) > 0 || len(removed) > 0 {
				t.Fatalf("B changed A's obj1: artifacts %v, removals %v (tool said %q)", arts, removed, result)
			}
		})
	}
	// B's objects map naming obj1, which A was handed and B was not, is
	// refused before the model, as an id nobody has is: no object of B's
	// can take an id B was never given, and A's obj1 is not told apart.
	t.Run("objects B was never handed", func(t *testing.T) {
		refuse := func(id string) answer {
			objects := map[string]any{id: map[string]any{"kind": "chart", "source": betaSpec, "title": "Beta chart"}}
			status, out, sent := s.asB(t, map[string]any{"messages": userSays("Change " + id), "objects": objects}, id)
			if len(sent) != 0 {
				t.Errorf("%d model requests for a refused request", len(sent))
			}
			return decodeAnswer(t, status, out, id)
		}
		mine, ghost := refuse("obj1"), refuse("obj7")
		if mine.status != 400 || mine.code != "invalid_objects" {
			t.Fatalf("B echoing obj1 it was never handed: %+v, want 400 invalid_objects", mine)
		}
		if mine != ghost {
			t.Errorf("LEAK: A's obj1 is told apart from an id nobody has: %+v vs %+v", mine, ghost)
		}
	})
}

// counters checks that B's edits of "obj1" allocated nothing in either
// account: A's next object is obj2 and B's first is obj1.
func (s *isolation) counters(t *testing.T) {
	tests := []struct {
		name, key, want string
	}{
		{"A's next object", s.keyA, "obj2"},
		{"B's first object", s.keyB, "obj1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.up.Enqueue(
				testupstream.ToolCalls(demobackend.ToolCall{Name: "create_chart", Arguments: `{"title":"Next","spec":` + betaSpec + `}`}),
				testupstream.Text("Made."),
			)
			status, stream, _ := s.chat(t, tt.key, map[string]any{"messages": userSays("Another chart")})
			arts := deltaKey(t, stream, "artifact")
			if status != 200 || len(arts) != 1 || arts[0]["object_id"] != tt.want {
				var got any
				if len(arts) == 1 {
					got = arts[0]["object_id"]
				}
				t.Errorf("LEAK: %s is %v, want %s: object counters are per account and B's edits allocate none", tt.name, got, tt.want)
			}
		})
	}
}

func (s *isolation) memory(t *testing.T) {
	systemOf := func(sent []*demobackend.ChatRequest) string {
		if len(sent) == 0 {
			t.Fatal("the request did not reach the model")
		}
		return sent[len(sent)-1].Messages[0].Text()
	}
	// The control: A's own u1 is told the fact, so its absence for B
	// means something.
	s.up.Enqueue(testupstream.Text("Hello."))
	if _, _, sent := s.chat(t, s.keyA, map[string]any{"user": "u1", "messages": userSays("Hello")}); !strings.Contains(systemOf(sent), secretFact) {
		t.Fatalf("A's own u1 is not told its remembered fact; the test would prove nothing:\n%s", systemOf(sent))
	}

	tests := []struct {
		name   string
		user   string
		header []string
	}{
		{"user in the body", "u1", nil},
		{"X-User-Id header", "", []string{"X-User-Id", "u1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := map[string]any{"messages": userSays("Hello")}
			if tt.user != "" {
				req["user"] = tt.user
			}
			s.up.Enqueue(testupstream.Text("Hello."))
			status, out, sent := s.asB(t, req, "", tt.header...)
			if status != 200 {
				t.Fatalf("%d %s", status, out)
			}
			if strings.Contains(systemOf(sent), secretFact) {
				t.Errorf("LEAK: B's end user u1 was told A's u1's fact")
			}
		})
	}

	t.Run("B's fact stays with B", func(t *testing.T) {
		s.up.Enqueue(
			testupstream.ToolCalls(demobackend.ToolCall{Name: "remember", Arguments: `{"fact":"` + betaFact + `"}`}),
			testupstream.Text("Noted."),
		)
		if status, out, _ := s.asB(t, map[string]any{"user": "u1", "messages": userSays("I prefer tea")}, ""); status != 200 {
			t.Fatalf("B's remember: %d %s", status, out)
		}
		s.up.Enqueue(testupstream.Text("Hello."))
		if _, _, sent := s.asB(t, map[string]any{"user": "u1", "messages": userSays("Hello")}, ""); !strings.Contains(systemOf(sent), betaFact) {
			t.Fatalf("B's own u1 is not told B's fact:\n%s", systemOf(sent))
		}
		s.up.Enqueue(testupstream.Text("Hello."))
		_, _, sent := s.chat(t, s.keyA, map[string]any{"user": "u1", "messages": userSays("Hello")})
		if sys := systemOf(sent); strings.Contains(sys, betaFact) || !strings.Contains(sys, secretFact) {
			t.Errorf("LEAK: A's u1 after B's remember: B's fact shown %v, A's fact shown %v",
				strings.Contains(sys, betaFact), strings.Contains(sys, secretFact))
		}
	})
}

// usage checks that the CLI's report for each account counts exactly the
// requests that account made.
func (s *isolation) usage(t *testing.T, e env) {
	type row struct {
		KeyID    *string `json:"key_id"`
		EndUser  *string `json:"end_user"`
		Requests int64   `json:"requests"`
	}
	report := func(t *testing.T, account, by string) []row {
		t.Helper()
		var report struct{ Data []row }
		out := mustCLI(t, e, "usage", "--account", account, "--by", by, "--json").stdout
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("usage --by %s: %v\n%s", by, err, out)
		}
		return report.Data
	}
	// Charges settle as the requests finish; wait for every one.
	keysOfAccount := map[string]map[string]bool{}
	for _, acct := range []struct{ name, key string }{{"iso-a", s.keyA}, {"iso-b", s.keyB}} {
		deadline := time.Now().Add(15 * time.Second)
		for {
			perKey, ledger := ledgerUsage(t, e, acct.name)
			if len(ledger) >= s.sent[acct.key] || time.Now().After(deadline) {
				keysOfAccount[acct.name] = map[string]bool{}
				for id := range perKey {
					keysOfAccount[acct.name][id] = true
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	tests := []struct {
		name, account, other, key string
	}{
		{"B", "iso-b", "iso-a", s.keyB},
		{"A", "iso-a", "iso-b", s.keyA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var total int64
			for _, r := range report(t, tt.account, "day") {
				total += r.Requests
			}
			if want := int64(s.sent[tt.key]); total != want || want == 0 {
				t.Errorf("LEAK: usage --account %s counts %d requests; the account made %d", tt.account, total, want)
			}
			for _, r := range report(t, tt.account, "key") {
				if r.KeyID == nil || !keysOfAccount[tt.account][*r.KeyID] || keysOfAccount[tt.other][*r.KeyID] {
					t.Errorf("LEAK: usage --account %s --by key shows key %v, not one of the account's", tt.account, r.KeyID)
				}
			}
			var u1 int64
			for _, r := range report(t, tt.account, "user") {
				if r.EndUser != nil && *r.EndUser == "u1" {
					u1 += r.Requests
				}
			}
			if want := int64(s.sent[tt.key+"/u1"]); u1 != want || want == 0 {
				t.Errorf("LEAK: usage --account %s --by user counts %d requests of u1; the account's u1 made %d", tt.account, u1, want)
			}
		})
	}
}
