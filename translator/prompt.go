package translator

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/translator/request"

	"github.com/switchyardhq/switchyard/tools"
)

// maxObjectsPromptChars bounds the sources of earlier objects copied into
// the system prompt; past it, objects are listed by id and title only.
const maxObjectsPromptChars = 200_000

// promptInputs is everything the service system prompt is built from.
type promptInputs struct {
	instructions string // operator text (Config.Instructions)
	now          time.Time
	location     *time.Location // nil: unknown
	userName     string
	offered      tools.Set
	files        bool
	searchOff    bool
	facts        []string
	objects      map[string]tools.ObjectRef
	client       []string // text of the client's system and developer messages
}

// systemPrompt builds the one system message the backend sees. The
// client's system and developer messages are folded into it, after the
// service's part, because many chat templates accept only one system
// message and only in first place, and because the service's rules come
// first (spec 4.1: safety rules take precedence).
func systemPrompt(in promptInputs) string {
	var b strings.Builder
	b.WriteString("You are a helpful assistant. Answer in the language of the user's last message. " +
		"Answer text is shown to the user as Markdown.")
	if in.instructions != "" {
		b.WriteString("\n\n")
		b.WriteString(in.instructions)
	}

	b.WriteString("\n\n## Context\n")
	loc := in.location
	if loc == nil {
		fmt.Fprintf(&b, "Current date and time: %s (UTC; the user's time zone is unknown).\n",
			in.now.UTC().Format("Monday, 2 January 2006, 15:04"))
	} else {
		t := in.now.In(loc)
		fmt.Fprintf(&b, "Current date and time for the user: %s (%s, UTC%s).\n",
			t.Format("Monday, 2 January 2006, 15:04"), loc.String(), t.Format("-07:00"))
	}
	// A name is one line, whatever the client sent.
	if name := strings.Join(strings.Fields(in.userName), " "); name != "" {
		fmt.Fprintf(&b, "The user's name is %s.\n", name)
	}

	b.WriteString("\n## Capabilities\n")
	if in.offered.Len() > 0 {
		fmt.Fprintf(&b, "Tools you can call: %s.\n", strings.Join(in.offered.Names(), ", "))
	} else {
		b.WriteString("You have no tools in this conversation.\n")
	}
	if !in.files {
		b.WriteString("File output is off: answer in plain text only and never offer to create files.\n")
	} else if _, ok := in.offered.Lookup(tools.NameCreateDocument); ok {
		b.WriteString("Create a file only when the user asks for a deliverable; otherwise answer in text.\n")
	}
	if in.searchOff {
		if _, ok := in.offered.Lookup(tools.NameOpenURL); ok {
			b.WriteString("Web search is off: do not search. You may open the links the user gave.\n")
		} else {
			b.WriteString("Web search is off: answer from what you know.\n")
		}
	}

	if len(in.facts) > 0 {
		b.WriteString("\n## What you remember about this user\n")
		for _, f := range in.facts {
			b.WriteString("- ")
			b.WriteString(f)
			b.WriteByte('\n')
		}
	}

	if len(in.objects) > 0 {
		writeObjects(&b, in.objects, in.files)
	}

	if len(in.client) > 0 {
		b.WriteString("\n## Instructions from the application\n")
		b.WriteString(strings.Join(in.client, "\n\n"))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeObjects lists the deliverables of earlier turns so the model can
// edit them instead of rebuilding them.
func writeObjects(b *strings.Builder, objects map[string]tools.ObjectRef, files bool) {
	ids := make([]string, 0, len(objects))
	for id := range objects {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return objectLess(ids[i], ids[j]) })

	b.WriteString("\n## Objects of this conversation\n")
	if files {
		b.WriteString("These deliverables exist already. To change one, call update_object with its id; " +
			"to remove one, call delete_object. Do not rebuild them from scratch. Embed one in a document with ![caption](ID).\n")
	} else {
		b.WriteString("These deliverables exist already. File output is off, so refer to them but do not change them.\n")
	}
	var retired []string
	budget := maxObjectsPromptChars
	for _, id := range ids {
		o := objects[id]
		if o.Kind == tools.Tombstone {
			retired = append(retired, id)
			continue
		}
		fmt.Fprintf(b, "\n### %s (%s): %s\n", id, o.Kind, o.Title)
		if o.Source == "" {
			continue
		}
		if len(o.Source) > budget {
			b.WriteString("(source omitted: too long)\n")
			continue
		}
		budget -= len(o.Source)
		b.WriteString("```\n")
		b.WriteString(o.Source)
		b.WriteString("\n```\n")
	}
	if len(retired) > 0 {
		fmt.Fprintf(b, "\nDeleted ids, never to be used again: %s.\n", strings.Join(retired, ", "))
	}
}

// objectLess orders obj<N> before el<N>, each by number.
func objectLess(a, b string) bool {
	ca, na, _ := objectid.Parse(a)
	cb, nb, _ := objectid.Parse(b)
	if ca != cb {
		return ca < cb
	}
	return na < nb
}

var linkPattern = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'\x60\[\]{}|\\^]+`)

// userLinks returns the distinct http(s) links in the user's messages.
func userLinks(msgs []request.Message) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range msgs {
		if m.Role != request.RoleUser {
			continue
		}
		for _, l := range linkPattern.FindAllString(m.Text(), -1) {
			l = strings.TrimRight(l, ".,;:!?)")
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}
