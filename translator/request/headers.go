package request

import (
	"fmt"
	"net/http"
	"sync"
	"time"
	_ "time/tzdata" // X-Timezone must not depend on the host's zoneinfo files
	"unicode/utf8"
)

// Request headers of /v3/chat/completions.
const (
	HeaderUserID         = "X-User-Id"
	HeaderUserName       = "X-User-Name"
	HeaderSessionID      = "X-Session-Id"
	HeaderTimezone       = "X-Timezone"
	HeaderProgressStream = "X-Progress-Stream"
	HeaderIncludeCost    = "X-Include-Cost"
)

type headerValues struct {
	userID, userName, sessionID string
	location                    *time.Location
	progress, includeCost       bool
}

func readHeaders(h http.Header) (headerValues, error) {
	hv := headerValues{progress: true}
	get := func(name string, max int) (string, error) {
		raw := h.Get(name)
		if raw == "" {
			return "", nil
		}
		v, ok := latin1(raw)
		if !ok {
			return "", invalid(CodeInvalidHeaderValue, name+" must be Latin-1 text without control characters.")
		}
		if utf8.RuneCountInString(v) > max {
			return "", invalid(CodeInvalidHeaderValue, fmt.Sprintf("%s is longer than %d characters.", name, max))
		}
		return v, nil
	}
	var err error
	if hv.userID, err = get(HeaderUserID, maxIDHeaderChars); err != nil {
		return hv, err
	}
	if hv.userName, err = get(HeaderUserName, maxUserNameChars); err != nil {
		return hv, err
	}
	if hv.sessionID, err = get(HeaderSessionID, maxIDHeaderChars); err != nil {
		return hv, err
	}
	tz, err := get(HeaderTimezone, maxTimezoneChars)
	if err != nil {
		return hv, err
	}
	if tz != "" {
		if hv.location, err = loadZone(tz); err != nil {
			return hv, err
		}
	}
	progress, err := get(HeaderProgressStream, 8)
	if err != nil {
		return hv, err
	}
	hv.progress = progress != "0"
	cost, err := get(HeaderIncludeCost, 8)
	if err != nil {
		return hv, err
	}
	hv.includeCost = cost == "1"
	return hv, nil
}

// loadZone resolves an IANA zone name. "Local" is refused: it would be
// the server's zone, which is exactly what the header exists to avoid.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" {
		return nil, invalid(CodeInvalidTimezone, "X-Timezone must be an IANA time zone name such as Europe/Berlin.")
	}
	if loc, ok := zoneCache.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, invalid(CodeInvalidTimezone, fmt.Sprintf("X-Timezone %q is not a known IANA time zone name (such as Europe/Berlin).", name))
	}
	// Only known zones are cached, so the cache is bounded by the zone
	// database, whatever clients send.
	zoneCache.Store(name, loc)
	return loc, nil
}

// zoneCache holds loaded zones: loading one reads and parses zoneinfo
// data, which costs more than the rest of request validation.
var zoneCache sync.Map

// latin1 returns the text of a header value that must be Latin-1.
//
// HTTP carries header values as bytes, and clients differ in what they
// put there: browsers and most SDKs refuse anything beyond U+00FF, but
// curl and some servers pass UTF-8 through. So a value that is valid
// UTF-8 is read as UTF-8 and accepted when every character is within
// Latin-1 (U+0000 to U+00FF); any other value is read byte by byte as
// ISO-8859-1. Control characters (C0, DEL and C1) are refused either way,
// which also catches most UTF-8 of characters beyond Latin-1 that slipped
// through as raw bytes.
func latin1(v string) (string, bool) {
	if utf8.ValidString(v) {
		for _, r := range v {
			if r > 0xFF || isControl(r) {
				return "", false
			}
		}
		return v, true
	}
	runes := make([]rune, len(v))
	for i := 0; i < len(v); i++ {
		r := rune(v[i])
		if isControl(r) {
			return "", false
		}
		runes[i] = r
	}
	return string(runes), true
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7F || (r >= 0x80 && r <= 0x9F)
}
