package request

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchyardhq/switchyard/internal/clip"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/tools"
)

// parseMessages decodes and checks the messages array.
func parseMessages(v rawJSON, lim Limits) ([]Message, error) {
	if len(v) == 0 || isNull(v) {
		return nil, invalid(CodeMissingParameter, "messages is required.")
	}
	return messageList(v, "messages", "an array of messages", "message", lim, parseMessage)
}

// messageReader reads one element, found at at, of a message list.
type messageReader func(v rawJSON, at string, lim Limits) (Message, error)

// partReader reads one content part, found at at.
type partReader func(v rawJSON, at string, lim Limits) (Part, error)

// messageList reads v, the array of messages under the body's member name
// (chat's messages, the Responses API's input), each element by one; the
// errors call an element noun and v, when it is no array, shape.
func messageList(v rawJSON, name, shape, noun string, lim Limits, one messageReader) ([]Message, error) {
	raw, ok := splitArray(v)
	if !ok {
		return nil, typeError(name, shape)
	}
	if len(raw) == 0 {
		return nil, invalid(CodeInvalidMessages, name+" must contain at least one "+noun+".")
	}
	if err := checkMessageCount(name, noun, len(raw), lim); err != nil {
		return nil, err
	}
	out := make([]Message, len(raw))
	for i, r := range raw {
		m, err := one(r, fmt.Sprintf("%s[%d]", name, i), lim)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// checkMessageCount refuses more than the profile's messages under name.
func checkMessageCount(name, noun string, n int, lim Limits) error {
	if n > lim.maxMessages() {
		return invalid(CodeInvalidMessages, fmt.Sprintf("%s holds %d %ss; at most %d are accepted.", name, n, noun, lim.maxMessages()))
	}
	return nil
}

func parseMessage(v rawJSON, at string, lim Limits) (Message, error) {
	d, role, err := taggedObject(v, at, "role", "an object with role and content")
	if err != nil {
		return Message{}, err
	}
	if role == "tool" || role == "function" {
		return Message{}, invalid(CodeInvalidRole, fmt.Sprintf(
			"%s.role %q is not supported: the assistant runs its own tools; send system, developer, user and assistant messages.", at, role))
	}
	if err := checkRole(at, role); err != nil {
		return Message{}, err
	}
	m := Message{Role: role}
	content, ok := d.raw("content")
	if !ok {
		if role == RoleAssistant {
			return m, nil // an assistant turn that only called tools
		}
		return Message{}, invalid(CodeMissingParameter, at+".content is required.")
	}
	if m.Parts, err = parseContent(content, at, m.IsSystem(), lim, parsePart); err != nil {
		return Message{}, err
	}
	return m, nil
}

// checkRole refuses a role that is not one of the four a message has.
func checkRole(at, role string) error {
	switch role {
	case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant:
		return nil
	}
	return invalid(CodeInvalidRole, fmt.Sprintf(
		"%s.role %q is unknown; use system, developer, user or assistant.", at, clip.Ellipsis(role, 40)))
}

// parseContent reads the content of the message at at: a string, which
// is one text part, or an array of parts, each read by part. A system
// message (system or developer) may hold only text.
func parseContent(content rawJSON, at string, system bool, lim Limits, part partReader) ([]Part, error) {
	if s, ok := decodeString(content); ok {
		return []Part{{Kind: PartText, Text: s}}, nil
	}
	raw, ok := splitArray(content)
	if !ok {
		return nil, typeError(at+".content", "a string or an array of content parts")
	}
	parts := make([]Part, 0, len(raw))
	for j, pr := range raw {
		p, err := part(pr, fmt.Sprintf("%s.content[%d]", at, j), lim)
		if err != nil {
			return nil, err
		}
		if p.Kind != PartText && system {
			return nil, invalid(CodeInvalidContent, at+": system and developer messages may hold only text parts.")
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func parsePart(v rawJSON, at string, lim Limits) (Part, error) {
	d, typ, err := taggedObject(v, at, "type", "an object with a type")
	if err != nil {
		return Part{}, err
	}
	switch typ {
	case "text":
		return textPart(&d, at, "text")
	case "input_file":
		return filePart(d.fields, at)
	case "file":
		// The shape OpenAI's SDKs send: {type:"file", file:{file_id}}.
		inner, _ := d.raw("file")
		f, ok := splitObject(inner)
		if !ok {
			return Part{}, typeError(at+".file", "an object with file_id")
		}
		return filePart(f, at+".file")
	case "image_url":
		return imageURLPart(d.fields, at, lim)
	default:
		return Part{}, invalid(CodeInvalidContent, fmt.Sprintf(
			"%s.type %q is not supported; use text, input_file or image_url.", at, clip.Ellipsis(typ, 40)))
	}
}

// taggedObject reads v, found at at, as an object whose string member key,
// which is required, tells what it holds; shape describes the object for
// the error when v is not one.
func taggedObject(v rawJSON, at, key, shape string) (decoder, string, error) {
	fields, ok := splitObject(v)
	if !ok {
		return decoder{}, "", typeError(at, shape)
	}
	d := decoder{fields: fields}
	tag, err := d.tag(at, key)
	if err != nil {
		return decoder{}, "", err
	}
	return d, tag, nil
}

// knownTags are the roles and part types requests carry: a tag that is
// one of them is read as the constant, without a string of its own per
// message and part.
var knownTags = [...]string{RoleUser, RoleAssistant, RoleSystem, RoleDeveloper, "text", "image_url", "input_file", "file"}

// tag reads the required string member key of the object found at at.
func (d *decoder) tag(at, key string) (string, error) {
	if v, ok := d.raw(key); ok && d.err == nil && len(v) >= 2 && v[0] == '"' {
		for _, known := range knownTags {
			if string(v[1:len(v)-1]) == known {
				return known, nil
			}
		}
	}
	tag := d.str(key)
	if d.err != nil {
		return "", typeError(at+"."+key, "a string")
	}
	if tag == "" {
		return "", invalid(CodeMissingParameter, at+"."+key+" is required.")
	}
	return tag, nil
}

// textPart reads a text part whose text is its member key.
func textPart(d *decoder, at, key string) (Part, error) {
	text := d.str(key)
	if d.err != nil {
		return Part{}, typeError(at+"."+key, "a string")
	}
	return Part{Kind: PartText, Text: text}, nil
}

func filePart(fields members, at string) (Part, error) {
	d := decoder{fields: fields}
	if _, ok := d.raw("file_url"); ok {
		return Part{}, invalid(CodeUnsupportedURLScheme, at+": remote file URLs are not supported; upload the file to /v3/files and send its file_id.")
	}
	if _, ok := d.raw("file_data"); ok {
		return Part{}, invalid(CodeInvalidContent, at+": inline file_data is not supported; upload the file to /v3/files and send its file_id.")
	}
	id := d.str("file_id")
	if d.err != nil {
		return Part{}, typeError(at+".file_id", "a string")
	}
	if id == "" {
		return Part{}, invalid(CodeMissingParameter, at+".file_id is required.")
	}
	return Part{Kind: PartFile, FileID: id}, nil
}

func imageURLPart(fields members, at string, lim Limits) (Part, error) {
	inner, ok := fields.get("image_url")
	if !ok || isNull(inner) {
		return Part{}, invalid(CodeMissingParameter, at+".image_url is required.")
	}
	url, ok := decodeString(inner)
	if !ok {
		obj, ok := splitObject(inner)
		if !ok {
			return Part{}, typeError(at+".image_url", "an object {url}")
		}
		d := decoder{fields: obj}
		url = d.str("url")
		if d.err != nil {
			return Part{}, typeError(at+".image_url.url", "a string")
		}
	}
	return dataURLPart(url, at, lim)
}

// dataURLPart reads the image_url, a data URL, of the part at at.
func dataURLPart(url, at string, lim Limits) (Part, error) {
	img, err := decodeDataURL(url, lim.Profile.MaxInlineImage)
	if err != nil {
		return Part{}, prefixMessage(err, at+".image_url: ")
	}
	return Part{Kind: PartImage, Image: img}, nil
}

// imageTypes are the inline image formats accepted (spec 4.2 input formats).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// decodeDataURL checks data:<mime>;base64,<data> and returns its image
// as base64: the caller's own when it is standard base64 with padding,
// which it nearly always is, so that the image is neither decoded into a
// buffer of its own nor encoded again for the backend. The decoded size
// is checked from the encoded length before anything is read, so an
// oversized image costs no allocation.
func decodeDataURL(url string, maxBytes int64) (*tools.Image, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	if !ok || scheme == "" {
		return nil, invalid(CodeInvalidImage, "url must be a data URL (data:<mime>;base64,<data>).")
	}
	if !strings.EqualFold(scheme, "data") {
		return nil, invalid(CodeUnsupportedURLScheme, fmt.Sprintf(
			"%s URLs are not supported as attachments; send the image inline as a base64 data URL or upload it to /v3/files.", clip.Ellipsis(strings.ToLower(scheme), 16)))
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, invalid(CodeInvalidImage, "the data URL has no data.")
	}
	params := strings.Split(meta, ";")
	if !strings.EqualFold(params[len(params)-1], "base64") {
		return nil, invalid(CodeInvalidImage, "the data URL must be base64-encoded (data:<mime>;base64,<data>).")
	}
	if n := int64(base64.StdEncoding.DecodedLen(len(data))); maxBytes > 0 && n-3 > maxBytes {
		return nil, invalid(CodeImageTooLarge, fmt.Sprintf(
			"The inline image exceeds %d bytes; upload larger images to /v3/files.", maxBytes))
	}
	b64, head, size, ok := checkBase64(data)
	if !ok {
		return nil, invalid(CodeInvalidImage, "the data URL holds invalid base64.")
	}
	if maxBytes > 0 && size > maxBytes {
		return nil, invalid(CodeImageTooLarge, fmt.Sprintf(
			"The inline image exceeds %d bytes; upload larger images to /v3/files.", maxBytes))
	}
	// Trust the bytes, not the label: clients often say image/jpeg for a PNG.
	mime := http.DetectContentType(head)
	if !imageTypes[mime] {
		return nil, invalid(CodeInvalidImage, "the inline data is not a PNG, JPEG, WebP or GIF image.")
	}
	img := tools.InlineImage(mime, b64)
	return &img, nil
}

// sniffLen is as much of an image as http.DetectContentType reads.
const sniffLen = 512

// checkBase64 reads data as base64 and returns it in standard, padded
// form, the first sniffLen bytes it decodes to and the decoded length. It
// accepts what encoding/base64 decodes, as the gateway always has:
// padded or not (unpadded only when the length says so), with line
// breaks, with stray bits after the last byte. Standard base64 is
// checked in pieces through a small buffer and returned as it is; any
// other form is decoded whole and encoded again, as it has to be for
// backends that take only the standard form.
func checkBase64(data string) (b64 string, head []byte, size int64, ok bool) {
	if b64, head, size, ok = checkStandard(data); ok {
		return b64, head, size, true
	}
	enc := base64.StdEncoding
	if !strings.HasSuffix(data, "=") && len(data)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(data)
	if err != nil {
		return "", nil, 0, false
	}
	return base64.StdEncoding.EncodeToString(b), b[:min(len(b), sniffLen)], int64(len(b)), true
}

// strictBase64 refuses stray bits after the last byte, which decode but
// encode differently: the standard form is the one that would be sent.
var strictBase64 = base64.StdEncoding.Strict()

// checkStandard reports whether data is standard base64 with padding,
// whole quanta, no line breaks, padding at the end only, decoding it a
// piece at a time into a buffer on the stack.
func checkStandard(data string) (b64 string, head []byte, size int64, ok bool) {
	// encoding/base64 skips line breaks, which would shift the pieces'
	// quanta, and the standard form has none.
	if len(data)%4 != 0 || strings.IndexByte(data, '\n') >= 0 || strings.IndexByte(data, '\r') >= 0 {
		return "", nil, 0, false
	}
	if i := strings.IndexByte(data, '='); i >= 0 && i < len(data)-2 {
		return "", nil, 0, false
	}
	const piece = 4 << 10 // whole quanta
	var src [piece]byte
	var dst [piece/4*3 + 8]byte // the slack keeps encoding/base64 on its fast path to the end
	for off := 0; off < len(data); off += piece {
		n := copy(src[:], data[off:])
		m, err := strictBase64.Decode(dst[:], src[:n])
		if err != nil {
			return "", nil, 0, false
		}
		if off == 0 {
			head = append([]byte(nil), dst[:min(m, sniffLen)]...)
		}
		size += int64(m)
	}
	return data, head, size, true
}

func prefixMessage(err error, prefix string) error {
	var ae *apierror.Error
	if errors.As(err, &ae) {
		c := *ae
		c.Message = prefix + lowerFirst(c.Message)
		return &c
	}
	return err
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	// Keep acronyms such as "PNG" or "URL" as they are.
	if len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
