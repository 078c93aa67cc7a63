package request

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/tools"
)

// pngBytes is a valid PNG signature followed by padding; enough for
// content sniffing.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 32)...)

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

func userWith(content string) string {
	return `{"model":"svc-3","messages":[{"role":"user","content":` + content + `}]}`
}

func imageMessage(url string) string {
	return userWith(`[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":` + jsonString(url) + `}}]`)
}

func TestParseRequestRules(t *testing.T) {
	revA := Limits{Profile: policy.ProfileFor(policy.RevisionA), SystemBudgetChars: 10}
	revB := Limits{Profile: policy.ProfileFor(policy.RevisionB)}
	small := revB
	small.Profile.MaxInlineImage = 16
	one := revB
	one.MaxMessages = 1

	cases := []parseCase{
		// Body shape.
		{name: "minimal valid request", body: `{"model":"svc-3","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if !r.Files || r.SkipSearch || r.Stream || !r.Progress || r.IncludeCost || r.Location != nil {
					t.Errorf("defaults wrong: %+v", r)
				}
				if len(r.Messages) != 1 || r.Messages[0].Text() != "hi" {
					t.Errorf("messages %+v", r.Messages)
				}
			}},
		{name: "malformed JSON", body: `{"model":"svc-3",`, wantCode: CodeInvalidJSON},
		{name: "body is an array", body: `[]`, wantCode: CodeInvalidJSON},
		{name: "empty body", body: ``, wantCode: CodeInvalidJSON},
		{name: "trailing garbage", body: `{"model":"svc-3","messages":[{"role":"user","content":"hi"}]} x`, wantCode: CodeInvalidJSON},
		{name: "model missing", body: `{"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeMissingParameter},
		{name: "model not a string", body: `{"model":3,"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "any model string accepted", body: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`},
		{name: "model of 256 characters accepted", body: `{"model":"` + strings.Repeat("é", 256) + `","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if utf8.RuneCountInString(r.Model) != 256 {
					t.Errorf("model of %d characters", utf8.RuneCountInString(r.Model))
				}
			}},
		{name: "model over 256 characters refused", body: `{"model":"` + strings.Repeat("m", 257) + `","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidParameter},
		{name: "stream not a boolean", body: `{"model":"m","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "stream_options not an object", body: `{"model":"m","stream_options":true,"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "include_usage not a boolean", body: `{"model":"m","stream_options":{"include_usage":1},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "include_usage read", body: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if !r.Stream || !r.IncludeUsage {
					t.Errorf("stream %v include_usage %v", r.Stream, r.IncludeUsage)
				}
			}},
		{name: "null fields are absent", body: `{"model":"m","stream":null,"user":null,"modalities":null,"objects":null,"messages":[{"role":"user","content":"hi"}]}`},
		{name: "client tools refused", body: `{"model":"m","tools":[{"type":"function"}],"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeUnsupportedParameter},
		{name: "empty tools accepted", body: `{"model":"m","tools":[],"messages":[{"role":"user","content":"hi"}]}`},
		{name: "n above one refused", body: `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeUnsupportedParameter},
		{name: "sampling passed through", body: `{"model":"m","temperature":0.2,"seed":7,"stop":["x"],"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if string(r.Sampling["temperature"]) != "0.2" || string(r.Sampling["seed"]) != "7" || len(r.Sampling) != 3 {
					t.Errorf("sampling %v", r.Sampling)
				}
			}},
		{name: "sampling of wrong type", body: `{"model":"m","temperature":"hot","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "unknown fields ignored", body: `{"model":"m","logprobs":false,"metadata":{},"messages":[{"role":"user","content":"hi"}]}`},

		// Messages.
		{name: "messages missing", body: `{"model":"m"}`, wantCode: CodeMissingParameter},
		{name: "messages empty", body: `{"model":"m","messages":[]}`, wantCode: CodeInvalidMessages,
			wantMessage: "messages must contain at least one message."},
		{name: "messages over the limit", body: `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, limits: &one,
			wantCode: CodeInvalidMessages, wantMessage: "messages holds 2 messages; at most 1 are accepted."},
		{name: "messages not an array", body: `{"model":"m","messages":{}}`, wantCode: CodeInvalidType},
		{name: "message not an object", body: `{"model":"m","messages":["hi"]}`, wantCode: CodeInvalidType},
		{name: "role missing", body: `{"model":"m","messages":[{"content":"hi"}]}`, wantCode: CodeMissingParameter,
			wantMessage: "messages[0].role is required."},
		{name: "unknown role", body: `{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`, wantCode: CodeInvalidRole,
			wantMessage: `messages[0].role "wizard" is unknown; use system, developer, user or assistant.`},
		{name: "tool role refused", body: `{"model":"m","messages":[{"role":"tool","content":"hi","tool_call_id":"x"}]}`, wantCode: CodeInvalidRole,
			wantMessage: `messages[0].role "tool" is not supported: the assistant runs its own tools; send system, developer, user and assistant messages.`},
		{name: "role of wrong type", body: `{"model":"m","messages":[{"role":1,"content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "user content missing", body: `{"model":"m","messages":[{"role":"user"}]}`, wantCode: CodeMissingParameter,
			wantMessage: "messages[0].content is required."},
		{name: "assistant content may be null", body: `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null},{"role":"user","content":"b"}]}`},
		{name: "content of wrong type", body: userWith(`42`), wantCode: CodeInvalidType},
		{name: "developer role accepted", body: `{"model":"m","messages":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}]}`},

		// Content parts.
		{name: "text parts", body: userWith(`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`),
			check: func(t *testing.T, r *Request) {
				if r.Messages[0].Text() != "a\nb" {
					t.Errorf("text %q", r.Messages[0].Text())
				}
			}},
		{name: "part type missing", body: userWith(`[{"text":"a"}]`), wantCode: CodeMissingParameter},
		{name: "unknown part type", body: userWith(`[{"type":"input_audio","input_audio":{}}]`), wantCode: CodeInvalidContent},
		{name: "text part without string", body: userWith(`[{"type":"text","text":5}]`), wantCode: CodeInvalidType},
		{name: "input_file part", body: userWith(`[{"type":"input_file","file_id":"file-1"}]`),
			check: func(t *testing.T, r *Request) {
				if p := r.Messages[0].Parts[0]; p.Kind != PartFile || p.FileID != "file-1" {
					t.Errorf("part %+v", p)
				}
			}},
		{name: "OpenAI file part shape", body: userWith(`[{"type":"file","file":{"file_id":"file-2"}}]`),
			check: func(t *testing.T, r *Request) {
				if r.Messages[0].Parts[0].FileID != "file-2" {
					t.Errorf("part %+v", r.Messages[0].Parts[0])
				}
			}},
		{name: "input_file without id", body: userWith(`[{"type":"input_file"}]`), wantCode: CodeMissingParameter},
		{name: "input_file with remote URL", body: userWith(`[{"type":"input_file","file_url":"https://example.com/a.pdf"}]`), wantCode: CodeUnsupportedURLScheme},
		{name: "inline file_data refused", body: userWith(`[{"type":"input_file","file_data":"AAAA"}]`), wantCode: CodeInvalidContent},
		{name: "system message with image refused", body: `{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":` + jsonString(dataURL("image/png", pngBytes)) + `}}]}]}`, wantCode: CodeInvalidContent,
			wantMessage: "messages[0]: system and developer messages may hold only text parts."},

		// Images.
		{name: "inline PNG", body: imageMessage(dataURL("image/png", pngBytes)),
			check: func(t *testing.T, r *Request) {
				p := r.Messages[0].Parts[1]
				if p.Kind != PartImage || p.Image.MIME != "image/png" {
					t.Fatalf("image part %+v", p)
				}
				if b, err := p.Image.Bytes(); err != nil || !bytes.Equal(b, pngBytes) {
					t.Errorf("image bytes %x, %v; want %x", b, err, pngBytes)
				}
			}},
		{name: "image_url as a bare string", body: userWith(`[{"type":"image_url","image_url":` + jsonString(dataURL("image/png", pngBytes)) + `}]`)},
		{name: "mislabelled image is sniffed", body: imageMessage(dataURL("image/jpeg", pngBytes)),
			check: func(t *testing.T, r *Request) {
				if r.Messages[0].Parts[1].Image.MIME != "image/png" {
					t.Errorf("mime %q", r.Messages[0].Parts[1].Image.MIME)
				}
			}},
		{name: "https image URL", body: imageMessage("https://example.com/cat.png"), wantCode: CodeUnsupportedURLScheme},
		{name: "http image URL", body: imageMessage("HTTP://example.com/cat.png"), wantCode: CodeUnsupportedURLScheme},
		{name: "ftp image URL", body: imageMessage("ftp://example.com/cat.png"), wantCode: CodeUnsupportedURLScheme},
		{name: "not a URL", body: imageMessage("cat.png"), wantCode: CodeInvalidImage,
			wantMessage: "messages[0].content[1].image_url: url must be a data URL (data:<mime>;base64,<data>)."},
		{name: "data URL without base64", body: imageMessage("data:image/png,abc"), wantCode: CodeInvalidImage},
		{name: "data URL with bad base64", body: imageMessage("data:image/png;base64,@@@@"), wantCode: CodeInvalidImage},
		{name: "data URL that is not an image", body: imageMessage(dataURL("image/png", []byte("just some text, not an image at all"))), wantCode: CodeInvalidImage},
		{name: "image over the profile limit", body: imageMessage(dataURL("image/png", pngBytes)), limits: &small, wantCode: CodeImageTooLarge},
		{name: "image_url missing", body: userWith(`[{"type":"image_url"}]`), wantCode: CodeMissingParameter},

		// Modalities.
		{name: "text only", body: `{"model":"m","modalities":["text"],"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Files {
					t.Errorf("files on for text-only")
				}
			}},
		{name: "modalities without text", body: `{"model":"m","modalities":["files"],"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidModalities},
		{name: "modalities empty", body: `{"model":"m","modalities":[],"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidModalities},
		{name: "modalities a string", body: `{"model":"m","modalities":"text","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidModalities},
		{name: "modalities unknown value", body: `{"model":"m","modalities":["text","audio"],"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidModalities},
		{name: "modalities in extra_body", body: `{"model":"m","extra_body":{"modalities":["text"]},"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Files {
					t.Errorf("extra_body.modalities ignored")
				}
			}},
		{name: "bad modalities in extra_body", body: `{"model":"m","extra_body":{"modalities":["files"]},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidModalities},
		{name: "top-level modalities win", body: `{"model":"m","modalities":["text","files"],"extra_body":{"modalities":["text"]},"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if !r.Files {
					t.Errorf("extra_body overrode top level")
				}
			}},

		// skip_search, user, extra_body.
		{name: "skip_search top level", body: `{"model":"m","skip_search":true,"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if !r.SkipSearch {
					t.Errorf("skip_search lost")
				}
			}},
		{name: "skip_search in extra_body", body: `{"model":"m","extra_body":{"skip_search":true,"user_name":"Ada"},"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if !r.SkipSearch || r.UserName != "Ada" {
					t.Errorf("extra_body lost: %+v", r)
				}
			}},
		{name: "skip_search of wrong type", body: `{"model":"m","skip_search":"yes","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "extra_body not an object", body: `{"model":"m","extra_body":[],"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "extra_body.user_name of wrong type", body: `{"model":"m","extra_body":{"user_name":1},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidType},
		{name: "body user", body: `{"model":"m","user":"u-1","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.EndUser != "u-1" {
					t.Errorf("user %q", r.EndUser)
				}
			}},
		{name: "user too long", body: `{"model":"m","user":"` + strings.Repeat("u", 300) + `","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidParameter},

		// Objects.
		{name: "objects map", body: `{"model":"m","objects":{"obj1":{"kind":"document","source":"# A","title":"A"},"el2":{"kind":"tombstone"}},"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Objects["obj1"] != (tools.ObjectRef{Kind: "document", Source: "# A", Title: "A"}) || r.Objects["el2"].Kind != tools.Tombstone {
					t.Errorf("objects %+v", r.Objects)
				}
			}},
		{name: "diagram object keeps its echoed theme and aspect", body: `{"model":"m","objects":{"obj1":{"kind":"diagram","source":"digraph{}","title":"D","theme":"dark","aspect":"portrait"}},"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Objects["obj1"] != (tools.ObjectRef{Kind: "diagram", Source: "digraph{}", Title: "D", Theme: "dark", Aspect: "portrait"}) {
					t.Errorf("objects %+v", r.Objects)
				}
			}},
		{name: "diagram object theme unknown", body: `{"model":"m","objects":{"obj1":{"kind":"diagram","theme":"sepia"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "diagram object aspect unknown", body: `{"model":"m","objects":{"obj1":{"kind":"diagram","aspect":"tall"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object id malformed", body: `{"model":"m","objects":{"doc1":{"kind":"document"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object id with leading zero", body: `{"model":"m","objects":{"obj01":{"kind":"document"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object id zero", body: `{"model":"m","objects":{"el0":{"kind":"chart"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object kind unknown", body: `{"model":"m","objects":{"obj1":{"kind":"pdf"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object kind missing", body: `{"model":"m","objects":{"obj1":{"title":"x"}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object entry of wrong type", body: `{"model":"m","objects":{"obj1":"document"},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "object source of wrong type", body: `{"model":"m","objects":{"obj1":{"kind":"chart","source":{}}},"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},
		{name: "objects not a map", body: `{"model":"m","objects":["obj1"],"messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeInvalidObjects},

		// System message rule.
		{name: "revision B system limit", body: `{"model":"m","messages":[{"role":"system","content":"` + strings.Repeat("s", 2001) + `"},{"role":"user","content":"hi"}]}`, wantCode: CodeSystemMessageTooLong},
		{name: "revision B system limit counts characters", body: `{"model":"m","messages":[{"role":"system","content":"` + strings.Repeat("é", 2000) + `"},{"role":"user","content":"hi"}]}`},
		{name: "revision B system limit spans system messages", body: `{"model":"m","messages":[{"role":"system","content":"` + strings.Repeat("s", 1500) + `"},{"role":"developer","content":"` + strings.Repeat("d", 501) + `"},{"role":"user","content":"hi"}]}`, wantCode: CodeSystemMessageTooLong},
		{name: "revision A shortens", limits: &revA, body: `{"model":"m","messages":[{"role":"system","content":"0123456789ABCDEF"},{"role":"system","content":"more"},{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if !r.SystemShortened || r.Messages[0].Text() != "0123456789" || r.Messages[1].Text() != "" || r.Messages[2].Text() != "hi" {
					t.Errorf("shortened %v: %q %q %q", r.SystemShortened, r.Messages[0].Text(), r.Messages[1].Text(), r.Messages[2].Text())
				}
			}},

		// Headers.
		{name: "headers applied", body: `{"model":"m","user":"body-user","extra_body":{"user_name":"Body"},"messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderUserID: "hdr-user", HeaderUserName: "Zoë", HeaderSessionID: "s-1", HeaderTimezone: "Europe/Berlin", HeaderProgressStream: "0", HeaderIncludeCost: "1"},
			check: func(t *testing.T, r *Request) {
				if r.EndUser != "hdr-user" || r.UserName != "Zoë" || r.SessionID != "s-1" || r.Progress || !r.IncludeCost || r.Location.String() != "Europe/Berlin" {
					t.Errorf("headers not applied: %+v", r)
				}
			}},
		{name: "Latin-1 bytes in a header", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderUserName: "Jos\xe9"},
			check: func(t *testing.T, r *Request) {
				if r.UserName != "José" {
					t.Errorf("user name %q", r.UserName)
				}
			}},
		{name: "header beyond Latin-1", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderUserName: "李雷"}, wantCode: CodeInvalidHeaderValue},
		{name: "header with control character", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderUserID: "a\x01b"}, wantCode: CodeInvalidHeaderValue},
		{name: "header too long", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderSessionID: strings.Repeat("s", 300)}, wantCode: CodeInvalidHeaderValue},
		{name: "unknown time zone", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderTimezone: "Mars/Olympus"}, wantCode: CodeInvalidTimezone},
		{name: "Local time zone refused", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderTimezone: "Local"}, wantCode: CodeInvalidTimezone},
		{name: "time zone path refused", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderTimezone: "../../etc/passwd"}, wantCode: CodeInvalidTimezone},
		{name: "progress on for other values", body: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			headers: map[string]string{HeaderProgressStream: "1", HeaderIncludeCost: "yes"},
			check: func(t *testing.T, r *Request) {
				if !r.Progress || r.IncludeCost {
					t.Errorf("progress %v cost %v", r.Progress, r.IncludeCost)
				}
			}},
	}
	runParseCases(t, Parse, revB, cases)
}

func TestImageLimitsDifferByRevision(t *testing.T) {
	// 10 MB < size <= 10 MiB: accepted in A, refused in B.
	img := make([]byte, 10_200_000)
	copy(img, pngBytes)
	body := []byte(imageMessage(dataURL("image/png", img)))
	if _, err := Parse(body, http.Header{}, Limits{Profile: policy.ProfileFor(policy.RevisionA)}); err != nil {
		t.Errorf("revision A refused a 10.2 MB image: %v", err)
	}
	_, err := Parse(body, http.Header{}, Limits{Profile: policy.ProfileFor(policy.RevisionB)})
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != CodeImageTooLarge {
		t.Errorf("revision B: got %v, want %s", err, CodeImageTooLarge)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	seeds := []string{
		`{"model":"svc-3","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"modalities":["text"],"skip_search":true,"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_file","file_id":"f"}]}]}`,
		`{"model":"m","objects":{"obj1":{"kind":"document","source":"x","title":"t"},"el2":{"kind":"tombstone"}},"extra_body":{"user_name":"A","modalities":["text","files"]},"messages":[{"role":"assistant","content":null}]}`,
		imageMessage(dataURL("image/png", pngBytes)),
		imageMessage("https://example.com/x.png"),
		`{"model":"m","messages":[]}`,
		`[1,2]`,
		`{"model":"m","temperature":"x","messages":[{"role":"user","content":"hi"}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "Europe/Berlin", "Ada")
	}
	lim := Limits{Profile: policy.ProfileFor(policy.RevisionB), MaxMessages: 64, MaxObjects: 64}
	f.Fuzz(func(t *testing.T, body []byte, tz, name string) {
		h := http.Header{}
		h.Set(HeaderTimezone, tz)
		h.Set(HeaderUserName, name)
		req, err := Parse(body, h, lim)
		if err != nil {
			var ae *apierror.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error is not an *apierror.Error: %T %v", err, err)
			}
			if ae.Status != http.StatusBadRequest || ae.Code == "" || ae.Message == "" {
				t.Fatalf("bad error %+v", ae)
			}
			return
		}
		// Whatever was accepted satisfies the rules.
		if !json.Valid(body) {
			t.Fatalf("accepted a body that is not valid JSON: %q", body)
		}
		if req.Model == "" || len(req.Messages) == 0 || len(req.Messages) > 64 {
			t.Fatalf("accepted model %q with %d messages", req.Model, len(req.Messages))
		}
		sys := 0
		for _, m := range req.Messages {
			switch m.Role {
			case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant:
			default:
				t.Fatalf("accepted role %q", m.Role)
			}
			if m.IsSystem() {
				sys += len([]rune(m.Text()))
			}
			for _, p := range m.Parts {
				if p.Kind != PartImage {
					continue
				}
				if p.Image == nil {
					t.Fatalf("accepted image part %+v", p)
				}
				if b, err := p.Image.Bytes(); err != nil || int64(len(b)) > lim.Profile.MaxInlineImage || base64.StdEncoding.EncodeToString(b) != p.Image.Base64() {
					t.Fatalf("accepted image part of %d bytes (%v), base64 %.40q", len(b), err, p.Image.Base64())
				}
			}
		}
		if sys > lim.Profile.MaxSystemChars {
			t.Fatalf("accepted %d system characters", sys)
		}
		for id, o := range req.Objects {
			if _, _, ok := objectid.Parse(id); !ok || !knownKinds[o.Kind] {
				t.Fatalf("accepted object %q %+v", id, o)
			}
		}
	})
}

// A body whose JSON breaks anywhere, deep in a member the parse does not
// read included, is refused as invalid JSON, which comes before any other
// fault of it (a key named twice, a missing model).
func TestInvalidJSONAnywhereIsRefusedFirst(t *testing.T) {
	lim := Limits{Profile: policy.ProfileFor(policy.RevisionB), MaxMessages: 64, MaxObjects: 64, Strict: true}
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"a":[1,]}}`,
		`{"model":"m","Model":"n","messages":[],"x":tru}`,
		`{"messages":[{"role":"user","content":"hi\x01"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}]} x`,
	} {
		_, err := Parse([]byte(body), http.Header{}, lim)
		var ae *apierror.Error
		if !errors.As(err, &ae) || ae.Code != CodeInvalidJSON || !strings.Contains(ae.Message, "not valid JSON") {
			t.Errorf("%s: %v, want invalid JSON", body, err)
		}
	}
}
