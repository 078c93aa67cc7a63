// Package memory is the per-end-user memory of the assistant: the
// remember(fact) tool, which writes to a storage.Memory. The
// orchestrator reads the same storage.Memory to put the facts into the service
// system prompt of later conversations.
package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
)

// Defaults of Tool.
const (
	DefaultMaxFacts     = 50
	DefaultMaxFactChars = 500
)

// Tool is remember(fact). Register it with tools.EndUserMemory so that it
// is offered only to requests that name an end user: without one there is
// nobody to remember the fact for.
type Tool struct {
	// Store receives the facts. Required.
	Store storage.Memory
	// MaxFacts bounds the facts kept per end user; the oldest are dropped
	// first. Default: DefaultMaxFacts.
	MaxFacts int
	// MaxFactChars bounds one fact, in characters; longer facts are
	// refused so the model writes a shorter one. Default:
	// DefaultMaxFactChars.
	MaxFactChars int
}

var _ tools.Tool = (*Tool)(nil)
var _ tools.Labeler = (*Tool)(nil)

func (t *Tool) Name() string { return tools.NameRemember }

func (t *Tool) Description() string {
	return "Remember one short fact about the user (a preference, their role, a standing instruction) for later conversations. " +
		"Use it only for facts the user would expect you to keep; never for secrets such as passwords."
}

func (t *Tool) Schema() json.RawMessage { return tools.Schemas[tools.NameRemember] }

func (t *Tool) Label(json.RawMessage) string { return "Remembering" }

// Execute stores the fact for the call's end user.
func (t *Tool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	if call.Env == nil || call.Env.EndUserID == "" {
		return tools.Result{}, tools.Failf("there is no user to remember facts for")
	}
	var args struct {
		Fact string `json:"fact"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return tools.Result{}, tools.Failf(`arguments must be a JSON object {"fact": string}`)
	}
	fact := strings.Join(strings.Fields(args.Fact), " ")
	if fact == "" {
		return tools.Result{}, tools.Failf("fact is empty")
	}
	if n := utf8.RuneCountInString(fact); n > t.maxFactChars() {
		return tools.Result{}, tools.Failf("fact is too long: write it in at most %d characters", t.maxFactChars())
	}
	if err := t.Store.Remember(ctx, call.Env.AccountID, call.Env.EndUserID, fact, t.maxFacts()); err != nil {
		return tools.Result{}, fmt.Errorf("remembering a fact: %w", err)
	}
	return tools.Result{Content: "Remembered."}, nil
}

func (t *Tool) maxFacts() int {
	if t.MaxFacts > 0 {
		return t.MaxFacts
	}
	return DefaultMaxFacts
}

func (t *Tool) maxFactChars() int {
	if t.MaxFactChars > 0 {
		return t.MaxFactChars
	}
	return DefaultMaxFactChars
}
