package admin

import (
	"net/http"
	"strconv"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Every admin listing pages alike (docs/admin.md, "Lists"): limit from 1
// to maxPageLimit, defaultPageLimit when absent; after the last_id of
// the page before. The bounds are one pair for every list so that a
// client needs no table of them; the /v3 Files API keeps OpenAI's own
// (10,000), which its SDKs assume.
const (
	defaultPageLimit = 100
	maxPageLimit     = 1000
)

// pageQuery is a listing's paging parameters, checked.
type pageQuery struct {
	limit int
	after string
}

// pageParams reads ?limit= and ?after=. valid says whether a cursor can
// name an item of this list at all; one that cannot is 400 invalid_after
// rather than an empty page, so that a client that confuses lists hears
// of it. before, which some listings once took, is refused instead of
// ignored: ignoring it would answer the first page again and again.
func pageParams(r *http.Request, valid func(string) bool) (pageQuery, error) {
	v := r.URL.Query()
	if _, ok := v["before"]; ok {
		return pageQuery{}, apierror.InvalidRequest("unsupported_parameter",
			"Lists page forward with after set to the previous page's last_id; before is not taken.")
	}
	p := pageQuery{limit: defaultPageLimit}
	if s, ok := v["limit"]; ok {
		n, err := strconv.Atoi(s[0])
		if err != nil || n < 1 || n > maxPageLimit {
			return pageQuery{}, apierror.InvalidRequest("invalid_limit",
				"limit must be a whole number from 1 to "+strconv.Itoa(maxPageLimit)+".")
		}
		p.limit = n
	}
	// An empty after is the first page, as the Files API reads it.
	if s := v.Get("after"); s != "" {
		if !valid(s) {
			return pageQuery{}, apierror.InvalidRequest("invalid_after",
				"after is the last_id of the previous page of this list.")
		}
		p.after = s
	}
	return p, nil
}

// trim cuts a page read with one item too many (limit+1, to learn
// whether more follow) to its limit and says whether it had more.
func trim[T any](items []T, limit int) ([]T, bool) {
	if len(items) > limit {
		return items[:limit], true
	}
	return items, false
}

// hasPrefixID says whether s can be an id its store writes with prefix:
// the prefix then at least one character of base 62 or hex, nothing
// else, and no longer than any id is.
func hasPrefixID(prefix string) func(string) bool {
	return func(s string) bool {
		if len(s) <= len(prefix) || len(s) > 64 || s[:len(prefix)] != prefix {
			return false
		}
		for i := len(prefix); i < len(s); i++ {
			c := s[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				return false
			}
		}
		return true
	}
}
