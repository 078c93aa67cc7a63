package tokenizer

import (
	"encoding/json"
	"strings"
	"testing"
)

// corpus is text of the kinds estimates see: prose, code, JSON tool
// schemas and arguments, CJK, and the edges of the pre-tokenizing
// pattern (contractions, marks, runs of spaces and line ends, digits,
// invalid UTF-8).
var corpus = map[string]string{
	"english": strings.Repeat("The gateway estimates what a backend consumed when it reports no usage. "+
		"It's billed in integer cents; rounding happens once, and we'll never charge twice. "+
		"PRICES ARE FIXED at registration, and the HTTPServer's limits don't change mid-stream.\n\n", 60),
	"code": strings.Repeat(`func (c *Counter) Add(text string) {
	budget := c.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	left := int64(budget) - c.counted // 16 << 10
	if left <= 0 {
		c.rest += int64(len(text))
		return
	}
	for i, r := range text { _ = i + 0x7fff; _ = r /* x */ }
}
`, 40),
	"json": strings.Repeat(`{"type":"function","function":{"name":"get_weather","description":"Get the current weather in a given location","parameters":{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}}}`+"\n", 50),
	"cjk":  strings.Repeat("网关在后端未报告用量时估算其消耗。価格は整数のセントで請求されます。한국어 텍스트도 포함됩니다。「引用」、句読点！\n", 80),
	"mixed": strings.Repeat("Ünïcödé naïve café — résumé; Ελληνικά Кириллица عربى हिन्दी ไทย 😀👍🏽 e\u0301 \u0301x "+
		"ǅungla ʰmodifier ǈ DŽ 1234567 ½ Ⅻ ٣٤ \t\r\n \u00a0\u2003 \u200b\u3000x  \n\n  y \r\n\r\n"+
		"I'M you'RE they'Ve we'LL he'D it'S don'T 'x' '' 's 'll ' re\xff\xfe bad\xc3 utf\x80 end//\n/\r\n", 40),
}

// edgeCases are short texts at the boundaries of the pattern's
// alternatives.
var edgeCases = []string{
	"", " ", "  ", "\n", "\r\n", " \n ", "a", "A", "aB", "Ab", "AB", "ABc", "ABCdef", "abcDEF",
	"\u0301", "\u0301\u0301a", " \u0301", "x\u0301", "\u0301A", "\u0301Ab", "!\u0301", "!A", "!a", "!!a",
	"ʰ", "ʰa", "Aʰ", "ǅ", "ǅa", "Aǅb", "中", "中文", "A中", "中a", "a中A",
	"1", "12", "123", "1234", "12345678", "a1", "1a", "½½½½", "٣٤٥٦",
	"'s", "a's", "A'S", "a'Re", "a'r", "a've", "a'v", "a'LL", "a'l", "a'd", "a'", "a''s", "'", "''",
	" !", " !!\n", "!\r\n\r\n/", " /\n/x", "a /", "  a", "   a", "\t\ta", " \t\n a", "a  ", "a \n", "a\n\n b",
	"\u00a0a", "\u00a0\u00a0a", "\u2003\n\u2003", "\u3000", "\x85x", "\v\fa",
	"\xff", "\xff\xfe", "a\xffb", "\xc3", "\xe4\xb8", "é\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"<|endoftext|>", "<|endofprompt|>", "😀", "👍🏽👍🏽", "🏽", " 😀", "a😀b",
}

// toolSchemas is a realistic set of tool definitions' parameters.
func toolSchemas() string {
	var b strings.Builder
	for _, name := range []string{"search_web", "read_file", "write_file", "run_shell", "get_weather", "send_email"} {
		schema, _ := json.Marshal(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":   map[string]any{"type": "string", "description": "What to look for in " + name},
				"limit":   map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
				"options": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			},
			"required": []string{"query"},
		})
		b.WriteString(name)
		b.Write(schema)
	}
	return b.String()
}

func BenchmarkCountCorpus(b *testing.B) {
	if !Warm() {
		b.Fatal("no vocabulary")
	}
	texts := map[string]string{"tools": toolSchemas()}
	for name, text := range corpus {
		texts[name] = text[:min(len(text), DefaultBudget)]
	}
	for _, name := range []string{"english", "code", "json", "tools", "cjk", "mixed"} {
		text := texts[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				Count(text)
			}
		})
	}
}

// BenchmarkCounter is one prompt estimate's worth: a conversation of
// messages well past the budget, and the tool definitions.
func BenchmarkCounter(b *testing.B) {
	if !Warm() {
		b.Fatal("no vocabulary")
	}
	messages := []string{corpus["english"][:3000], corpus["code"][:5000], corpus["cjk"], corpus["json"][:4000], corpus["english"]}
	tools := toolSchemas()
	b.ReportAllocs()
	for b.Loop() {
		var c Counter
		for _, m := range messages {
			c.Add(m)
		}
		c.Add(tools)
		c.Tokens()
	}
}
