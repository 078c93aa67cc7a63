package pdf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportMarkdown is a realistic analyst's report: headings, a table that
// fills most of a page, lists, code, a quote, links and two charts.
const reportMarkdown = `## Executive summary

Revenue for the third quarter reached **€48.2 million**, up *12.4 %* on the
same quarter last year and ahead of the plan by €1.9 million. Growth came
mostly from the **Enterprise** segment, where the new annual contracts signed
in the spring began to bill; the *Self-serve* segment was flat. Gross margin
improved to 71.3 % as hosting costs fell after the migration described in
[the infrastructure note](https://example.com/notes/infra-2026). ~~The Nordic
expansion~~ has been postponed to next year.

Three things stand out:

- Enterprise net revenue retention rose to **118 %**, the highest since 2023.
- Churn in the Self-serve segment fell for the second quarter in a row:
  - monthly plans: 3.1 % (from 3.6 %)
  - annual plans: 0.9 % (from 1.2 %)
- Operating cash flow turned positive in August, two months early.

![Quarterly revenue by segment, € million](obj1)

## Results by region

The table below shows revenue, growth and margin by region. Figures are in
€ thousand unless noted; growth is year on year.

| Region | Q3 2026 revenue | Q3 2025 revenue | Growth | Gross margin | Comment |
|---|---|---|---|---|---|
| Germany | 14,820 | 13,105 | 13.1 % | 72.4 % | Two large renewals in Munich and Hamburg |
| France | 8,930 | 8,012 | 11.5 % | 70.8 % | Public sector framework agreement started in July |
| United Kingdom | 7,415 | 6,870 | 7.9 % | 69.9 % | Currency headwind of about 1.5 points |
| Benelux | 5,260 | 4,410 | 19.3 % | 73.1 % | |
| Nordics | 3,980 | 3,655 | 8.9 % | 71.0 % | Expansion postponed, see above |
| Southern Europe | 4,115 | 3,702 | 11.2 % | 68.5 % | Strong self-serve growth in Spain |
| Rest of world | 3,680 | 3,130 | 17.6 % | 70.2 % | Mostly partners in North America |
| **Total** | **48,200** | **42,884** | **12.4 %** | **71.3 %** | |

### Method

Revenue is recognised when the service is delivered. Regional figures are
allocated by the billing address of the customer, which differs from the
sales territory for about 4 % of revenue.

1. Extract the invoices of the quarter from the billing system.
2. Convert every amount to euro at the monthly average rate.
3. Allocate each invoice to a region by billing address:
   1. the country of the address decides;
   2. addresses without a country go to *Rest of world*.
4. Reconcile the total with the general ledger.

The extraction is a single query, kept with the report so that the numbers
can be reproduced:

` + "```sql" + `
SELECT region, SUM(amount_eur) AS revenue_eur, COUNT(DISTINCT customer_id) AS customers
FROM invoices
WHERE invoice_date >= DATE '2026-07-01' AND invoice_date < DATE '2026-10-01' AND status = 'posted'
GROUP BY region
ORDER BY revenue_eur DESC;
` + "```" + `

## Customers

> "The migration was the smoothest we have done with any vendor. The team
> answered every question the same day." — Head of IT, a logistics customer
> in Rotterdam

Satisfaction stayed high: the Net Promoter Score was **54** (Q2: 51), from
1,240 responses. The full survey is at https://example.com/survey/q3-2026.

![Net Promoter Score by month](obj2)

---

## Outlook

We keep the full-year guidance of €190–195 million revenue. Risks are the
currency (about a third of costs are in US dollars) and the timing of two
public-sector tenders. Questions to [finance@example.com](mailto:finance@example.com).

#### Appendix: definitions

*Net revenue retention* is the revenue this quarter from customers who were
customers a year ago, divided by their revenue a year ago. ` + "`NRR = R(t) / R(t-4)`" + `,
measured on a constant-currency basis.
`

// unicodeMarkdown exercises the text the fonts lack.
const unicodeMarkdown = `# Unicode coverage

Accents: café, naïve, Zürich, Ångström, São Paulo, Łódź, Øresund, façade.
Decomposed: cafe` + "\u0301" + ` and Zu` + "\u0308" + `rich read as café and Zürich.

Greek: Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο (αβγδε ΑΒΓΔΕ).

Cyrillic: Съешь же ещё этих мягких французских булок, да выпей чаю.

Typography: “quotes”, ‘single’, en–dash, em—dash, ellipsis…, € £ ¥ © ® ™ ½ ± × ÷ ≤ ≥ → ←.

## Outside the fonts

CJK: 東京は日本の首都です。 Tokyo (東京) and 서울 (Seoul).

Emoji in black and white: launch 🚀 went well 🎉, thumbs 👍🏽, family 👨‍👩‍👧, flag 🇩🇪, keycap 1️⃣.

Shaped: नमस्ते दुनिया, क्षत्रिय — สวัสดีชาวโลก — வணக்கம் — নমস্কার.

Hebrew: שלום עולם — Arabic: مرحبا بالعالم — mixed: version 2 של המערכת.

Symbols: ✓ done, ✗ failed, ★ rating, ☃ snowman.

| Language | Sample | Note |
|---|---|---|
| Greek | Καλημέρα | drawn |
| Russian | Доброе утро | drawn |
| Japanese | おはようございます | replaced |
| Arabic | صباح الخير | replaced, right to left |
| Emoji | ☕ 🍰 | outlines |

` + "```" + `
// code keeps its spaces; emoji 🙂 and CJK 漢字 are handled the same way
fmt.Println("Grüße, κόσμε, мир")
` + "```" + `
`

// sampleDocs are the documents TestWriteSamples writes.
func sampleDocs(t testing.TB) map[string]Document {
	return map[string]Document{
		"report": {
			Title:    "Q3 2026 Business Review",
			Markdown: reportMarkdown,
			Elements: map[string]Image{
				"obj1": {PNG: chartPNG(t, 1600, 1000, 1), Caption: "Revenue"},
				"obj2": {PNG: chartPNG(t, 1600, 900, 2), Caption: "NPS"},
			},
			Created: time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC),
		},
		"unicode": {
			Title:    "Unicode: Ελληνικά, Кириллица, 日本語 🚀",
			Markdown: unicodeMarkdown,
			PageSize: Letter,
		},
	}
}

// TestWriteSamples writes the sample documents to the directory named by
// SWITCHYARD_RENDER_SAMPLES, for checking with real PDF tools.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("SWITCHYARD_RENDER_SAMPLES")
	if dir == "" {
		t.Skip("SWITCHYARD_RENDER_SAMPLES is not set")
	}
	for name, d := range sampleDocs(t) {
		res := renderOK(t, d)
		path := filepath.Join(dir, "pdf-"+strings.ToLower(name)+".pdf")
		if err := os.WriteFile(path, res.PDF, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d pages, %d bytes", path, res.Pages, len(res.PDF))
	}
}
