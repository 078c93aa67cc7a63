package corpus

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// longTable is a 90-row table of mixed text and number columns: it breaks
// across pages (repeating its header) and has narrow text columns beside
// wide number columns.
func longTable() string {
	countries := []string{"Switzerland", "Germany", "Netherlands", "United Kingdom", "France", "Sweden", "Portugal", "Austria", "Belgium"}
	plans := []string{"Enterprise", "Growth", "Starter"}
	var b strings.Builder
	b.WriteString("Every contract active on 30 September 2026, by annual recurring revenue. Growth is year on year.\n\n")
	b.WriteString("| # | Customer | Country | Plan | Seats | ARR (€) | Growth | Renewal |\n|---|---|---|---|---|---|---|---|\n")
	for i := range 90 {
		fmt.Fprintf(&b, "| %d | Customer %03d Holding | %s | %s | %d | %s | %.1f %% | 2027-%02d-%02d |\n",
			i+1, i+1, countries[i%len(countries)], plans[i%len(plans)], 20+(i*37)%900,
			thousands(12_000+(i*7_919)%480_000), float64((i*13)%400)/10-5, 1+i%12, 1+(i*7)%28)
	}
	b.WriteString("\nThe list continues in the billing system; contracts under €12,000 are left out.\n")
	return b.String()
}

// minutes is a long numbered list with nested bullets, so that items open
// pages and their markers must be drawn there.
func minutes() string {
	topics := []string{"budget", "hiring plan", "office move", "security review", "pricing change", "customer escalations"}
	var b strings.Builder
	b.WriteString("Present: the committee's seven members. Chair: Dana Whitfield.\n\n## Decisions and actions\n\n")
	for i := range 36 {
		fmt.Fprintf(&b, "%d. The committee discussed the %s and agreed on the next step, with an owner and a date for each action.\n", i+1, topics[i%len(topics)])
		if i%3 == 0 {
			// A nested list is indented to the item's text, past its number.
			indent := strings.Repeat(" ", len(strconv.Itoa(i+1))+2)
			b.WriteString(indent + "- Owner: the head of the department concerned.\n" + indent + "- Due: before the next meeting.\n")
		}
	}
	b.WriteString("\n## Next meeting\n\nThursday 12 November 2026, 10:00, room Aire.\n")
	return b.String()
}

// orders10k is the create_spreadsheet arguments of 10,000 order rows with
// three formulas each over three sheets, the workbook of the speed target.
func orders10k() string {
	regions := []string{"North", "South", "East", "West"}
	type sheet struct {
		Name string  `json:"name"`
		Rows [][]any `json:"rows"`
	}
	var sheets []sheet
	for s, n := range []int{3_334, 3_333, 3_333} {
		sh := sheet{Name: "Orders " + strconv.Itoa(s+1), Rows: [][]any{{"Region", "Units", "Price", "Discount", "Amount", "Net", "Share"}}}
		for i := range n {
			r := strconv.Itoa(i + 2)
			sh.Rows = append(sh.Rows, []any{regions[i%4], 1 + i%97, "$" + strconv.Itoa(10+i%90) + ".99",
				strconv.Itoa(i%10) + "%", "=B" + r + "*C" + r, "=E" + r + "*(1-D" + r + ")", "=F" + r + "/F$" + strconv.Itoa(n+2)})
		}
		last := strconv.Itoa(n + 1)
		sh.Rows = append(sh.Rows, []any{"Total", "=SUM(B2:B" + last + ")", nil, nil, "=SUM(E2:E" + last + ")", "=SUM(F2:F" + last + ")", nil})
		sheets = append(sheets, sh)
	}
	args, err := json.Marshal(map[string]any{"title": "Orders", "sheets": sheets})
	if err != nil {
		panic(err)
	}
	return string(args)
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
