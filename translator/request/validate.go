package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/policy"
)

const (
	defaultMaxMessages       = 2048
	defaultMaxObjects        = 1000
	defaultSystemBudgetChars = 16000
	maxObjectSourceChars     = 200_000
	maxIDHeaderChars         = 256
	maxModelChars            = 256 // as billing.MaxModelChars bounds /v1: it is stored and echoed
	maxUserNameChars         = 128
	maxTimezoneChars         = 64
	modalityText             = "text"
	modalityFiles            = "files"
)

// Limits bound what a request may carry. Profile is required; every other
// zero field means its default.
type Limits struct {
	// Profile is the active spec revision's profile: inline image size
	// and the system message rule come from it.
	Profile policy.Profile
	// MaxMessages caps len(messages). Default: 2048.
	MaxMessages int
	// MaxObjects caps the entries of the objects map. Default: 1000.
	MaxObjects int
	// SystemBudgetChars is how many characters of system and developer
	// messages Revision A keeps (it shortens instead of refusing; see
	// shortenSystem). Unused when Profile.MaxSystemChars is set.
	// Default: 16,000.
	SystemBudgetChars int
	// Strict makes Parse read the body as the /v1 probe (billing.ParseV1)
	// does, so that one parse can serve both admission and the handler: a
	// top-level member named twice in any letter case is refused, since
	// backends differ in which copy they read, and max_completion_tokens
	// (or max_tokens, max_output_tokens) must be a non-negative integer,
	// read into Request.MaxTokens to size the request's hold. Default:
	// false, a repeated name keeps its last value and those fields are
	// ignored.
	Strict bool
}

func (l Limits) maxMessages() int {
	if l.MaxMessages > 0 {
		return l.MaxMessages
	}
	return defaultMaxMessages
}

func (l Limits) maxObjects() int {
	if l.MaxObjects > 0 {
		return l.MaxObjects
	}
	return defaultMaxObjects
}

func (l Limits) systemBudget() int {
	if l.SystemBudgetChars > 0 {
		return l.SystemBudgetChars
	}
	return defaultSystemBudgetChars
}

// Parse validates a /v3/chat/completions request body and its headers.
func Parse(body []byte, h http.Header, lim Limits) (*Request, error) {
	req, fields, err := parseCommon(body, h, lim)
	if err != nil {
		return nil, err
	}
	if req.Messages, err = parseMessages(field(fields, "messages"), lim); err != nil {
		return nil, err
	}
	if err := req.finishParse(fields, lim); err != nil {
		return nil, err
	}
	return req, nil
}

// finishParse applies the system message rule to the parsed messages and
// reads the objects map, the steps every form of the request ends with.
func (req *Request) finishParse(fields members, lim Limits) error {
	var err error
	if req.SystemShortened, err = applySystemRule(req.Messages, lim); err != nil {
		return err
	}
	req.Objects, err = parseObjects(field(fields, "objects"), lim.maxObjects())
	return err
}

// parseCommon reads the headers and the members that every form of the
// request shares (model, stream, sampling, the /v3 extras), and returns
// the body's members for the form's own.
func parseCommon(body []byte, h http.Header, lim Limits) (*Request, members, error) {
	hv, err := readHeaders(h)
	if err != nil {
		return nil, members{}, err
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, members{}, invalid(CodeInvalidJSON, "The request body must be a JSON object.")
	}
	fields, dup, ok := splitBody(body, lim.Strict)
	switch {
	case ok:
	case !json.Valid(body):
		// Whatever else stopped the split: invalid JSON is said first.
		var v any
		return nil, members{}, invalid(CodeInvalidJSON, "The request body is not valid JSON: "+jsonErrorText(json.Unmarshal(body, &v)))
	case dup != "":
		return nil, members{}, invalid(CodeInvalidJSON, fmt.Sprintf("The request body names %q more than once.", clip.Ellipsis(dup, 40)))
	default:
		return nil, members{}, invalid(CodeInvalidJSON, "The request body must be a JSON object.")
	}
	req := &Request{Progress: hv.progress, IncludeCost: hv.includeCost, SessionID: hv.sessionID, Location: hv.location}
	d := decoder{fields: fields}

	req.Model = d.str("model")
	if d.err == nil && req.Model == "" {
		return nil, members{}, invalid(CodeMissingParameter, "model is required.")
	}
	if utf8.RuneCountInString(req.Model) > maxModelChars {
		return nil, members{}, invalid(CodeInvalidParameter, fmt.Sprintf("model must be at most %d characters.", maxModelChars))
	}
	req.Stream = d.boolean("stream")
	req.IncludeUsage = d.includeUsage()
	req.SkipSearch = d.boolean("skip_search")
	req.EndUser = d.str("user")
	modalities, haveModalities := d.raw("modalities")
	req.Sampling = d.sampling()
	if lim.Strict {
		req.MaxTokens = d.maxTokens()
	}
	d.refuseUnsupported()
	if d.err != nil {
		return nil, members{}, d.err
	}

	extra, err := parseExtraBody(field(fields, "extra_body"))
	if err != nil {
		return nil, members{}, err
	}
	// A field set both at the top level and in extra_body keeps its
	// top-level value; extra_body exists for SDKs that cannot send it
	// there.
	if v, ok := fields.get("skip_search"); !ok || isNull(v) {
		req.SkipSearch = extra.skipSearch
	}
	if !haveModalities {
		modalities = extra.modalities
	}
	if req.Files, err = parseModalities(modalities); err != nil {
		return nil, members{}, err
	}
	req.UserName = extra.userName
	if hv.userName != "" {
		req.UserName = hv.userName
	}
	if hv.userID != "" {
		req.EndUser = hv.userID
	}
	if utf8.RuneCountInString(req.EndUser) > maxIDHeaderChars {
		return nil, members{}, invalid(CodeInvalidParameter, fmt.Sprintf("user is longer than %d characters.", maxIDHeaderChars))
	}

	return req, fields, nil
}

type extraBody struct {
	skipSearch bool
	userName   string
	modalities rawJSON
}

func parseExtraBody(v rawJSON) (extraBody, error) {
	var e extraBody
	if len(v) == 0 || isNull(v) {
		return e, nil
	}
	fields, ok := splitObject(v)
	if !ok {
		return e, typeError("extra_body", "an object")
	}
	d := decoder{fields: fields}
	e.skipSearch = d.boolean("skip_search")
	e.userName = d.str("user_name")
	e.modalities, _ = d.raw("modalities")
	if d.err != nil {
		var ae *apierror.Error
		if errors.As(d.err, &ae) {
			ae.Message = "extra_body." + ae.Message
		}
		return e, d.err
	}
	if utf8.RuneCountInString(e.userName) > maxUserNameChars {
		return e, invalid(CodeInvalidParameter, fmt.Sprintf("extra_body.user_name is longer than %d characters.", maxUserNameChars))
	}
	return e, nil
}

// parseModalities reports whether files are on. Absent means the default
// ["text","files"].
func parseModalities(v rawJSON) (files bool, err error) {
	if len(v) == 0 || isNull(v) {
		return true, nil
	}
	var list []string
	if json.Unmarshal(v, &list) != nil {
		return false, invalid(CodeInvalidModalities, `modalities must be an array of strings, such as ["text"] or ["text","files"].`)
	}
	text := false
	for _, m := range list {
		switch m {
		case modalityText:
			text = true
		case modalityFiles:
			files = true
		default:
			return false, invalid(CodeInvalidModalities, fmt.Sprintf("modalities: unknown modality %q; use \"text\" and optionally \"files\".", m))
		}
	}
	if !text {
		return false, invalid(CodeInvalidModalities, `modalities must contain "text".`)
	}
	return files, nil
}
