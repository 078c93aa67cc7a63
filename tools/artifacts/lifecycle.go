package artifacts

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchyardhq/switchyard/tools"
)

// The store keeps what became of every object id (storage.ObjectIDs):
// the stored file of its current version, or that it was deleted or
// folded into a document as an element. The client's objects map is
// only its view of that, and may be stale (an event it missed) or made
// up; Reconcile corrects it before any tool runs.

// UnknownObjectsError lists object ids of a request's objects map that
// the account was never handed.
type UnknownObjectsError struct{ IDs []string }

func (e *UnknownObjectsError) Error() string {
	verb := "was"
	if len(e.IDs) > 1 {
		verb = "were"
	}
	return strings.Join(e.IDs, ", ") + " " + verb + " never issued to this account"
}

// Reconcile checks env.Objects, the client's objects map, against the
// store. It refuses ids the account was never handed
// (*UnknownObjectsError), so that no tool edits an object that does not
// exist and no later object shares its id. An object the store knows as
// deleted is a tombstone whatever the client says. One folded into a
// document is a tombstone too, and its entry moves to the element it
// became (env.Renamed records the move), so that embedding it again uses
// that element rather than folding it a second time. Without an id
// allocator there is nothing to check against.
func Reconcile(ctx context.Context, env *tools.Env) error {
	if env.IDs == nil || len(env.Objects) == 0 {
		return nil
	}
	ids := make([]string, 0, len(env.Objects))
	for id := range env.Objects {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	states, err := env.IDs.ObjectStates(ctx, env.AccountID, ids)
	if err != nil {
		return fmt.Errorf("artifacts: reading object states: %w", err)
	}
	var unknown []string
	for _, id := range ids {
		st := states[id]
		ref := env.Objects[id]
		switch {
		case !st.Issued:
			unknown = append(unknown, id)
		case !st.Retired || ref.Kind == tools.Tombstone:
		case st.RenamedTo != "":
			if _, known := env.Objects[st.RenamedTo]; !known {
				env.Objects[st.RenamedTo] = ref
			}
			if env.Renamed == nil {
				env.Renamed = map[string]string{}
			}
			env.Renamed[id] = st.RenamedTo
			env.Objects[id] = tools.ObjectRef{Kind: tools.Tombstone}
		default:
			env.Objects[id] = tools.ObjectRef{Kind: tools.Tombstone}
		}
	}
	if len(unknown) > 0 {
		return &UnknownObjectsError{IDs: unknown}
	}
	return nil
}

// rewriteEmbeds points a document's embeds of renamed ids at the
// elements they became, so that its source, which the client echoes and
// later edits re-render, names only live ids.
func rewriteEmbeds(markdown string, renamed map[string]string) string {
	if len(renamed) == 0 {
		return markdown
	}
	return embedPattern.ReplaceAllStringFunc(markdown, func(m string) string {
		sub := embedPattern.FindStringSubmatchIndex(m)
		id := m[sub[2]:sub[3]]
		el, ok := renamed[id]
		if !ok {
			return m
		}
		return m[:sub[2]] + el + m[sub[3]:]
	})
}

// deleteFile removes a stored file the object no longer holds. A failure
// leaves it to expire with the retention period; the object's own state
// is already right.
func (s *shared) deleteFile(ctx context.Context, accountID, fileID string) {
	if fileID == "" {
		return
	}
	_, _ = s.cfg.Files.Delete(ctx, accountID, fileID)
}
