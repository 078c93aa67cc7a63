package search

import (
	"strings"
	"time"
)

// dateLayouts are the forms providers write dates in: RFC 3339 with or
// without a zone (SearxNG writes Python's datetime.isoformat(), which has
// no zone for naive datetimes; Brave's page_age has none either), a
// space instead of the "T", and bare dates (Tavily).
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
	time.RFC1123Z,
	time.RFC1123,
	"January 2, 2006",
	"Jan 2, 2006",
}

// parseDate reads a provider's date; the zero time when s is empty, not
// a date, or not plausibly a publication date. Dates without a zone are
// taken as UTC; others keep their zone, so the date shown is the
// publisher's.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	for _, layout := range dateLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		// Python's datetime has no dates before year 1, and SearxNG drops
		// dates before 1900; what remains outside the web's lifetime is
		// a placeholder, not a publication date.
		if t.Year() < 1990 || t.Year() > 9999 {
			return time.Time{}
		}
		return t
	}
	return time.Time{}
}
