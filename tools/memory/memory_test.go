package memory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools"
)

type call struct {
	account, user, fact string
	max                 int
}

type recordingStore struct {
	calls []call
	err   error
}

func (s *recordingStore) Facts(context.Context, string, string) ([]string, error) { return nil, nil }

func (s *recordingStore) Remember(_ context.Context, account, user, fact string, max int) error {
	s.calls = append(s.calls, call{account, user, fact, max})
	return s.err
}

func TestRemember(t *testing.T) {
	env := &tools.Env{AccountID: "acct", EndUserID: "user"}
	cases := []struct {
		name      string
		tool      Tool
		env       *tools.Env
		args      string
		storeErr  error
		want      *call
		wantModel string // message the model gets on failure
	}{
		{name: "stores the fact", args: `{"fact":"Likes tea."}`, env: env,
			want: &call{"acct", "user", "Likes tea.", DefaultMaxFacts}},
		{name: "normalises whitespace", args: `{"fact":"  Likes\n  tea. "}`, env: env,
			want: &call{"acct", "user", "Likes tea.", DefaultMaxFacts}},
		{name: "custom bound", tool: Tool{MaxFacts: 3}, args: `{"fact":"x"}`, env: env,
			want: &call{"acct", "user", "x", 3}},
		{name: "no end user", args: `{"fact":"x"}`, env: &tools.Env{AccountID: "acct"},
			wantModel: "error: there is no user to remember facts for"},
		{name: "empty fact", args: `{"fact":"   "}`, env: env, wantModel: "error: fact is empty"},
		{name: "bad arguments", args: `["x"]`, env: env, wantModel: `error: arguments must be a JSON object {"fact": string}`},
		{name: "fact too long", tool: Tool{MaxFactChars: 5}, args: `{"fact":"abcdef"}`, env: env,
			wantModel: "error: fact is too long: write it in at most 5 characters"},
		{name: "store failure is hidden from the model", args: `{"fact":"x"}`, env: env, storeErr: errors.New("pq: connection refused"),
			want: &call{"acct", "user", "x", DefaultMaxFacts}, wantModel: "error: the tool failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &recordingStore{err: tc.storeErr}
			tool := tc.tool
			tool.Store = store
			res, err := tool.Execute(context.Background(), tools.Call{Name: "remember", Arguments: json.RawMessage(tc.args), Env: tc.env})
			switch {
			case tc.wantModel != "":
				if err == nil || tools.ModelMessage(err) != tc.wantModel {
					t.Errorf("error %v, model told %q, want %q", err, tools.ModelMessage(err), tc.wantModel)
				}
			case err != nil:
				t.Fatalf("unexpected error %v", err)
			case !strings.Contains(res.Content, "Remembered"):
				t.Errorf("result %q", res.Content)
			}
			if tc.want == nil {
				if len(store.calls) != 0 {
					t.Errorf("store called: %+v", store.calls)
				}
				return
			}
			if len(store.calls) != 1 || store.calls[0] != *tc.want {
				t.Errorf("store calls %+v, want %+v", store.calls, *tc.want)
			}
		})
	}
}

func TestToolContract(t *testing.T) {
	tool := &Tool{}
	if tool.Name() != tools.NameRemember || string(tool.Schema()) != string(tools.Schemas[tools.NameRemember]) || tool.Description() == "" {
		t.Error("remember tool does not match the public contract")
	}
}
