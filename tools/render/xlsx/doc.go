// Package xlsx renders the workbooks of the create_spreadsheet tool: a
// title and sheets of rows in, xlsx bytes out, with
// github.com/xuri/excelize/v2. It is a plain library: Parse reads the
// tool's JSON arguments strictly, Render writes the file deterministically.
//
// # Cells
//
// The first row of a sheet is its header row: it is written as text
// (numbers and booleans as they were written in JSON), bold on a tinted
// band, frozen, and with an autofilter over the whole table. Other cells
// are written as follows.
//
//   - JSON numbers are numbers (General format); booleans are
//     booleans; null is an empty cell.
//   - A string starting with "=" is a formula, kept as a formula
//     ("=SUM(B2:B9)"). Its value is computed and cached in the file,
//     so that previews and readers of cached values see it; the
//     workbook also asks Excel and LibreOffice to recalculate on
//     opening, so their own results win. The package's evaluator
//     computes arithmetic, comparisons, "&", references and ranges
//     (whole columns too) across sheets, IF, IFERROR, SUM, AVERAGE, MIN,
//     MAX, PRODUCT, COUNT, COUNTA, SUMIF, COUNTIF, AVERAGEIF (without
//     wildcards), SUMPRODUCT, ROUND, ROUNDUP, ROUNDDOWN, INT, ABS, SQRT,
//     MOD, POWER, AND, OR, NOT, CONCATENATE, CONCAT, LEN, UPPER, LOWER
//     and TRIM, with no limit on their number but a budget of ten
//     million cell reads per workbook. Other formulas are computed by
//     the formula library, up to 5,000 of them in a workbook of up to
//     200,000 cells. Values are not cached in a workbook calling NOW,
//     TODAY, RAND, RANDBETWEEN or RANDARRAY (they would tie the bytes to
//     the clock), nor for circular references. Formulas whose quotes or
//     brackets do not pair up are
//     refused, since Excel would not open the file. A lone "=" and
//     strings starting with "==" are text.
//   - A formula's number format is chosen for it: the one most used by
//     the typed values of its column (a total under amounts is an
//     amount); else that of the cells it refers to (an amount if any is
//     one, otherwise their shared format, none when it divides, counts or
//     works on dates); else its column's, below.
//   - ISO 8601 dates ("2026-03-01") are dates shown as yyyy-mm-dd;
//     date-times ("2026-03-01T14:30", "2026-03-01 14:30:05",
//     "2026-03-01T14:30:00Z") are shown as yyyy-mm-dd hh:mm[:ss]; times
//     of day ("14:30", "14:30:05") as hh:mm[:ss]. Excel has no time
//     zones: a "Z" or "+02:00" suffix is accepted and the wall-clock time
//     is kept as written. Dates before 1900-03-01 stay text.
//   - Percentages ("12.5%", "-3 %") are numbers (0.125, -0.03) with a
//     percent format showing the decimals written.
//   - Amounts of money with $, €, £ or ¥ before or after the number
//     ("$1,234.50", "-$5", "($5.00)", "€1.234,50", "1.234,50 €") are
//     numbers with a currency format keeping the symbol's place and the
//     decimals written. The last of "." and "," is the decimal separator;
//     a lone "," followed by one or two digits is a decimal comma.
//   - Plain decimal strings ("1234", "-12.50", "1,234,567.89") are
//     numbers, with a format keeping the decimals and thousands
//     separators written.
//   - Everything else is text. In particular digits with a leading zero
//     ("007", "02134"), a plus sign ("+1 555 0100"), inner spaces
//     ("1 000"), an exponent, or more than 15 significant digits (card
//     numbers, long ids) stay text, since as numbers Excel would lose
//     digits.
//   - A leading apostrophe keeps a string that would otherwise be
//     converted as text, and is dropped ("'=A1", "'2026-03-01"), as in
//     Excel. On a string that is text anyway it is kept ("'90s").
//
// Each column then shows its numbers one way (columns.go): the format
// family most of them use (currency, with JSON numbers among amounts
// becoming amounts; percent; plain), one count of decimals (the most its
// typed values write, at most four; two for fractional formula results
// in a column of formulas), thousands separators for plain numbers from
// 1,000 up unless the header names an identifier or a year or the values
// are all years. A formula that divides is a ratio and shows as a
// percentage with one decimal (more when the ratios are tiny) where the
// header names a ratio ("Share",
// "Growth", "%") or its values lie between -1 and 1 and the header names
// no per-unit value ("Price", "Average"). Formulas under a header naming
// a date ("Due date", "=A2+30") whose values are all date serials show as
// dates.
//
// A table's last row is its totals row when it is labelled "Total" (or
// "Grand total", "Sum", "Subtotal") in its first filled cell, or holds
// only formulas of which one sums its own column: it is bold between a
// rule and a double rule across the table, and the autofilter stops
// above it so that sorting keeps it at the foot.
//
// Text is aligned left and numbers right, with a small indent; booleans
// are centred. Line breaks in text wrap the cell; text wider than the
// widest column wraps too, and the row is made tall enough for its
// lines. Control characters XML cannot carry are dropped.
//
// # Sheets and columns
//
// Sheet names follow Excel's rules without failing the call: see
// Workbook.SheetNames. Formulas that name a renamed sheet ("='Q1/Q2'!A1")
// are changed to name it as it is now called. Each column is as wide as
// its widest value as displayed, computed formula values included, so
// that none shows "###" (header included, with room for the filter
// button), between 6 and 60 characters. Each sheet's dimension names its
// used range. For printing and PDF export the header row repeats on
// every page, a table wider than a portrait page is printed landscape,
// and one up to about three portrait pages wide is scaled to fit the
// page's width.
//
// # Files
//
// The workbook title is the document title; the document times are
// Workbook.Time, or a fixed date. The zip parts are written in a fixed
// order with fixed times, so equal workbooks give equal bytes.
package xlsx
