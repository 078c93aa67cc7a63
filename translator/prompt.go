package translator

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
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

// writeSystemPrompt writes the one system message the backend sees into
// b, without its trailing line breaks. The client's system and developer
// messages are folded into it, after the service's part, because many
// chat templates accept only one system message and only in first place,
// and because the service's rules come first (spec 4.1: safety rules take
// precedence).
//
// b is one of promptBuffers, and the conversation encodes the prompt from
// it (upstream.NewConversationText): the prompt is never a string of its
// own, which was garbage as soon as encoded, and a buffer of its own,
// grown by doubling, left its smaller copies as garbage too.
func writeSystemPrompt(b *bytes.Buffer, in promptInputs) {
	b.WriteString("You are a helpful assistant. Answer in the language of the user's last message. " +
		"Answer text is shown to the user as Markdown.")
	if in.instructions != "" {
		b.WriteString("\n\n")
		b.WriteString(in.instructions)
	}

	b.WriteString("\n\n## Context\n")
	var date [64]byte
	const dateLayout = "Monday, 2 January 2006, 15:04"
	if loc := in.location; loc == nil {
		b.WriteString("Current date and time: ")
		b.Write(in.now.UTC().AppendFormat(date[:0], dateLayout))
		b.WriteString(" (UTC; the user's time zone is unknown).\n")
	} else {
		t := in.now.In(loc)
		b.WriteString("Current date and time for the user: ")
		b.Write(t.AppendFormat(date[:0], dateLayout))
		b.WriteString(" (")
		b.WriteString(loc.String())
		b.WriteString(", UTC")
		b.Write(t.AppendFormat(date[:0], "-07:00"))
		b.WriteString(").\n")
	}
	// A name is one line, whatever the client sent.
	if name := strings.Join(strings.Fields(in.userName), " "); name != "" {
		b.WriteString("The user's name is ")
		b.WriteString(name)
		b.WriteString(".\n")
	}

	b.WriteString("\n## Capabilities\n")
	if in.offered.Len() > 0 {
		b.WriteString("Tools you can call: ")
		for i, t := range in.offered.Tools() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.Name())
		}
		b.WriteString(".\n")
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
		writeObjects(b, in.objects, in.files)
	}

	if len(in.client) > 0 {
		b.WriteString("\n## Instructions from the application\n")
		for i, c := range in.client {
			if i > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(c)
		}
		b.WriteByte('\n')
	}
	b.Truncate(len(bytes.TrimRight(b.Bytes(), "\n")))
}

// promptBuffers keeps the buffers prompts are written in.
var promptBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPromptBuffer is the largest buffer kept: a prompt with the sources
// of many objects may take hundreds of KB, which are not kept.
const maxPromptBuffer = 16 << 10

func putPromptBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPromptBuffer {
		b.Reset()
		promptBuffers.Put(b)
	}
}

// writeObjects lists the deliverables of earlier turns so the model can
// edit them instead of rebuilding them.
func writeObjects(b *bytes.Buffer, objects map[string]tools.ObjectRef, files bool) {
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
		text := m.Text()
		if !strings.Contains(text, "://") {
			continue // no link, and none of the pattern's matching
		}
		for _, l := range linkPattern.FindAllString(text, -1) {
			l = strings.TrimRight(l, ".,;:!?)")
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}
