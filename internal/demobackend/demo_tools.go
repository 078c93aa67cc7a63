package demobackend

import (
	"encoding/json"
	"regexp"
	"strings"
)

// demoTool picks the tool call the demo backend makes for a user
// message, so that a gateway in front of it shows every deliverable and
// search: a message that asks for a chart, a diagram, a spreadsheet, a
// Word file, a PDF report, a web search or the reading of a link gets a
// call of that tool, when the request offers it. ok is false for other
// messages, which get the plain demo answer.
func demoTool(req *ChatRequest) (ToolCall, bool) {
	text := req.LastUserText()
	lower := strings.ToLower(text)
	for _, d := range demoTools {
		if !req.HasTool(d.tool) || !d.match(lower) {
			continue
		}
		return ToolCall{Name: d.tool, Arguments: d.args(text)}, true
	}
	return ToolCall{}, false
}

var linkPattern = regexp.MustCompile(`https?://[^\s<>"')\]]+`)

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var demoTools = []struct {
	tool  string
	match func(lower string) bool
	args  func(text string) string
}{
	{
		tool:  "open_url",
		match: func(l string) bool { return linkPattern.MatchString(l) && containsAny(l, "read", "open", "summar") },
		args:  func(t string) string { return mustJSON(map[string]string{"url": linkPattern.FindString(t)}) },
	},
	{
		tool:  "web_search",
		match: func(l string) bool { return containsAny(l, "search", "look up", "latest news") },
		args:  func(t string) string { return mustJSON(map[string]string{"query": quote(t)}) },
	},
	{
		tool:  "create_chart",
		match: func(l string) bool { return containsAny(l, "chart", "graph", "plot") },
		args: func(string) string {
			return `{"title":"Quarterly revenue","spec":{"type":"bar","x_label":"Quarter","y_label":"Revenue","y_format":"currency",` +
				`"labels":["Q1","Q2","Q3","Q4"],"series":[{"name":"2025","values":[120000,135000,128000,161000]},` +
				`{"name":"2026","values":[142000,151000,166000,189000]}]}}`
		},
	},
	{
		tool:  "create_diagram",
		match: func(l string) bool { return containsAny(l, "diagram", "flowchart", "architecture") },
		args: func(string) string {
			return mustJSON(map[string]string{"title": "Request flow", "language": "dot", "source": `digraph G {
  client [label="Client"]; gateway [label="Switchyard"]; backend [label="Model backend"]; store [label="Ledger"];
  client -> gateway [label="/v3"]; gateway -> backend [label="chat completions"]; gateway -> store [label="usage"];
}`})
		},
	},
	{
		tool:  "create_spreadsheet",
		match: func(l string) bool { return containsAny(l, "spreadsheet", "excel", "xlsx") },
		args: func(string) string {
			return `{"title":"Sales by region","sheets":[{"name":"Sales","rows":[["Region","Quarter end","Revenue","Growth"],` +
				`["North","2026-03-31","$142,000.00","12%"],["South","2026-03-31","$98,000.00","7%"],["East","2026-03-31","$121,000.00","-2%"],` +
				`["Total","","=SUM(C2:C4)",null]]}]}`
		},
	},
	{
		tool:  "create_word_document",
		match: func(l string) bool { return containsAny(l, "word document", "word file", "docx") },
		args: func(string) string {
			return mustJSON(map[string]string{"title": "Project brief", "markdown": demoMarkdown})
		},
	},
	{
		tool:  "create_document",
		match: func(l string) bool { return containsAny(l, "pdf", "report") },
		args: func(string) string {
			return mustJSON(map[string]string{"title": "Quarterly report", "markdown": demoMarkdown})
		},
	},
}

const demoMarkdown = `# Summary

Revenue grew in every quarter of 2026, led by the **North** region.

## Figures

| Region | Revenue | Growth |
|---|---:|---:|
| North | $142,000 | 12% |
| South | $98,000 | 7% |
| East | $121,000 | -2% |

## Next steps

1. Extend the North campaign to the East.
2. Review pricing in the South.
`
