package xlsx

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// maxSheetName is Excel's limit, in UTF-16 code units.
const maxSheetName = 31

// SheetNames returns the names Render gives wb's sheets, in order: the
// names asked for, changed only as far as Excel requires, so that a tool
// can tell the model what the tabs are called.
//
//   - [ and ] become ( and ); : / \ * ? become "-"; control characters
//     are dropped; surrounding spaces are trimmed.
//   - Apostrophes at either end are dropped (Excel refuses them) and one
//     inside becomes ’, because formulas and filters quote sheet names
//     with apostrophes.
//   - An empty name becomes "Sheet<N>", N being the sheet's position.
//   - Names are cut to 31 characters.
//   - A name equal to an earlier one, ignoring case, or to "History",
//     which Excel reserves, gets " (2)", " (3)"... (cut to fit).
func (wb Workbook) SheetNames() []string {
	names := make([]string, len(wb.Sheets))
	taken := map[string]bool{"history": true}
	for i, s := range wb.Sheets {
		name := cleanSheetName(s.Name)
		if name == "" {
			name = "Sheet" + strconv.Itoa(i+1)
		}
		name = truncateUTF16(name, maxSheetName)
		for n := 2; taken[strings.ToLower(name)]; n++ {
			suffix := " (" + strconv.Itoa(n) + ")"
			name = truncateUTF16(cleanSheetName(s.Name), maxSheetName-len(suffix))
			if name == "" {
				name = "Sheet" + strconv.Itoa(i+1)
			}
			name = strings.TrimRight(name, " ") + suffix
		}
		taken[strings.ToLower(name)] = true
		names[i] = name
	}
	return names
}

// cleanSheetName applies the character rules of SheetNames.
func cleanSheetName(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '[':
			return '('
		case r == ']':
			return ')'
		case strings.ContainsRune(`:/\*?`, r):
			return '-'
		case r == '\'':
			return '’'
		case unicode.IsControl(r), r == 0xFFFE, r == 0xFFFF:
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	// Apostrophes at the ends were mapped to ’ above; Excel refuses only
	// the ASCII one there, but a name wrapped in quotes was not meant to
	// keep them.
	name = strings.TrimFunc(name, func(r rune) bool { return r == '’' || unicode.IsSpace(r) })
	return name
}

// truncateUTF16 cuts s to at most n UTF-16 code units without splitting
// a character, then trims trailing spaces the cut exposed.
func truncateUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return strings.TrimRightFunc(s[:i], unicode.IsSpace)
		}
	}
	return s
}
