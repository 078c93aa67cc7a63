package xlsx

import (
	"strconv"
	"strings"
	"time"
)

// excelEpoch is day 0 of Excel's 1900 date system as it is used in
// practice: serial 1 is 1900-01-01 only because Excel counts a 29
// February 1900 that never was, so from 1900-03-01 on, serials count
// from 1899-12-30.
var excelEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// Dates Excel can show: before 1900-03-01 its serials are off by the
// phantom leap day, and it stops at 9999-12-31.
var (
	firstDate = time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)
	lastDate  = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// parseDateTime reads ISO 8601 dates ("2026-03-01"), date-times
// ("2026-03-01T14:30", "2026-03-01 14:30:05", "2026-03-01T14:30:00Z",
// "2026-03-01T14:30:00.250+02:00") and times of day ("14:30",
// "14:30:05"). Excel has no time zones: a zone suffix is accepted and the
// time is kept as written, the wall-clock time its writer meant.
func parseDateTime(s string) (cell, bool) {
	if len(s) < 5 || s[0] < '0' || s[0] > '9' {
		return cell{}, false
	}
	if len(s) <= 8 {
		if frac, format, ok := parseClock(s); ok && frac < 1 {
			return cell{kind: kindNumber, num: frac, format: format, width: len(format)}, true
		}
		return cell{}, false
	}
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return cell{}, false
	}
	day, err := time.Parse(time.DateOnly, s[:10])
	if err != nil || day.Before(firstDate) || day.After(lastDate) {
		return cell{}, false
	}
	serial := float64(day.Sub(excelEpoch) / (24 * time.Hour))
	if len(s) == 10 {
		return cell{kind: kindNumber, num: serial, format: formatDate, width: len(formatDate)}, true
	}
	if s[10] != 'T' && s[10] != 't' && s[10] != ' ' {
		return cell{}, false
	}
	frac, clock, ok := parseClock(trimZone(s[11:]))
	if !ok || frac >= 1 {
		return cell{}, false
	}
	format := "yyyy-mm-dd " + clock
	return cell{kind: kindNumber, num: serial + frac, format: format, width: len(format)}, true
}

// parseClock reads "hh:mm", "hh:mm:ss" or "hh:mm:ss.fff" and returns the
// fraction of a day and the number format that shows what was written.
func parseClock(s string) (float64, string, bool) {
	if len(s) < 5 || s[2] != ':' {
		return 0, "", false
	}
	h, okH := twoDigits(s[0:2], 23)
	m, okM := twoDigits(s[3:5], 59)
	if !okH || !okM {
		return 0, "", false
	}
	seconds := float64(h*3600 + m*60)
	if len(s) == 5 {
		return seconds / 86400, formatTime, true
	}
	if s[5] != ':' || len(s) < 8 {
		return 0, "", false
	}
	sec, ok := twoDigits(s[6:8], 59)
	if !ok {
		return 0, "", false
	}
	seconds += float64(sec)
	format := formatTime + ":ss"
	if len(s) > 8 {
		digits := s[9:]
		if s[8] != '.' && s[8] != ',' || digits == "" || len(digits) > 9 || !allDigits(digits) {
			return 0, "", false
		}
		f, _ := strconv.ParseFloat("0."+digits, 64)
		seconds += f
		format += ".000"
	}
	return seconds / 86400, format, true
}

// trimZone removes a "Z", "±hh:mm", "±hhmm" or "±hh" suffix. A clock
// has no sign in it, so the last sign starts the zone.
func trimZone(s string) string {
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return s[:len(s)-1]
	}
	i := strings.LastIndexAny(s, "+-")
	if i < 0 {
		return s
	}
	zone := s[i+1:]
	if len(zone) == 5 && zone[2] == ':' {
		zone = zone[:2] + zone[3:]
	}
	if (len(zone) != 2 && len(zone) != 4) || !allDigits(zone) {
		return s
	}
	return s[:i]
}

// twoDigits reads exactly two digits no greater than limit.
func twoDigits(s string, limit int) (int, bool) {
	if len(s) != 2 || !allDigits(s) {
		return 0, false
	}
	n := int(s[0]-'0')*10 + int(s[1]-'0')
	return n, n <= limit
}
