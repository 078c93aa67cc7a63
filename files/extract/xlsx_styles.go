package extract

import (
	"math"
	"strings"
	"time"
)

// numberStyles tells which cell styles format numbers as dates or
// times, so that such cells show as dates rather than serial numbers.
// Other number formats (currency, percent, decimals) are not applied:
// the stored value is exact, and the model reads it fine.
type numberStyles struct {
	dateXF   []bool // by cellXfs index, the s attribute of a cell
	date1904 bool
}

// maxCellXfs bounds the styles read; Excel itself allows 64,000.
const maxCellXfs = 65_536

func (s numberStyles) isDate(xf int) bool {
	return xf >= 0 && xf < len(s.dateXF) && s.dateXF[xf]
}

// readNumberStyles reads the styles part. A styles part that cannot be
// read only costs date formatting, so its errors are ignored.
func readNumberStyles(pkg *ooxmlPackage, part string) numberStyles {
	var doc struct {
		NumFmts []struct {
			ID   int    `xml:"numFmtId,attr"`
			Code string `xml:"formatCode,attr"`
		} `xml:"numFmts>numFmt"`
		XFs []struct {
			NumFmtID int `xml:"numFmtId,attr"`
		} `xml:"cellXfs>xf"`
	}
	if err := pkg.readMeta(part, &doc); err != nil {
		return numberStyles{}
	}
	custom := make(map[int]bool, len(doc.NumFmts))
	for _, f := range doc.NumFmts {
		custom[f.ID] = dateFormatCode(f.Code)
	}
	var s numberStyles
	for i, xf := range doc.XFs {
		if i == maxCellXfs {
			break
		}
		date, ok := custom[xf.NumFmtID]
		if !ok {
			date = builtinDateFormat(xf.NumFmtID)
		}
		s.dateXF = append(s.dateXF, date)
	}
	return s
}

// builtinDateFormat reports whether a built-in number format id is a
// date or time format (ECMA-376 Part 1, 18.8.30, and the East Asian ids
// Excel adds).
func builtinDateFormat(id int) bool {
	return id >= 14 && id <= 22 || id >= 27 && id <= 36 || id >= 45 && id <= 47 || id >= 50 && id <= 58
}

// dateFormatCode reports whether a custom format code shows dates or
// times: whether it has a date or time token outside quoted text,
// escaped characters and bracketed colours or locales.
func dateFormatCode(code string) bool {
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case '"':
			if j := strings.IndexByte(code[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				return false
			}
		case '\\', '_', '*':
			i++ // the next character is literal, a width or a fill
		case '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				return false
			}
			switch strings.ToLower(code[i+1 : i+j]) {
			case "h", "hh", "m", "mm", "s", "ss":
				return true // elapsed time
			}
			i += j
		case 'y', 'Y', 'd', 'D', 'h', 'H', 's', 'S', 'm', 'M':
			return true
		}
	}
	return false
}

// excelDate formats a date serial number as ISO 8601: a date, a date
// and time, or a time alone for a serial below one.
func excelDate(serial float64, date1904 bool) (string, bool) {
	if math.IsNaN(serial) || serial < 0 || serial >= 2_958_466 { // 9999-12-31
		return "", false
	}
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	switch {
	case date1904:
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	case serial < 60:
		// Excel counts a 29 February 1900 that never was; serials
		// before it are one day off from the usual base.
		base = base.AddDate(0, 0, 1)
	}
	days := math.Floor(serial)
	secs := int64(math.Round((serial - days) * 86400))
	t := base.AddDate(0, 0, int(days)).Add(time.Duration(secs) * time.Second)
	switch {
	case serial < 1 && !date1904:
		return t.Format("15:04:05"), true
	case t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0:
		return t.Format("2006-01-02"), true
	}
	return t.Format("2006-01-02 15:04:05"), true
}
