package docx

import "github.com/switchyardhq/switchyard/tools/render"

// MaxNesting is how many block quotes and list markers one line may open.
// The Markdown parser's time grows with the square of the nesting on a
// line, so a line of a few thousand ">" would hold a render for minutes;
// real documents stay far below this.
const MaxNesting = 32

// checkNesting returns a *render.SourceError if a line of src opens more
// than MaxNesting quotes and list items at its start.
func checkNesting(src []byte) error {
	line := 1
	for start := 0; start < len(src); line++ {
		end := start
		for end < len(src) && src[end] != '\n' {
			end++
		}
		if containerPrefix(src[start:end]) > MaxNesting {
			return render.Errorf("line %d nests more than %d block quotes or list items; flatten it", line, MaxNesting)
		}
		start = end + 1
	}
	return nil
}

// containerPrefix counts the quote markers (>) and list markers (-, *, +,
// 1. or 1)) that open a line.
func containerPrefix(l []byte) int {
	depth := 0
	i := 0
	blank := func(i int) bool { return i >= len(l) || l[i] == ' ' || l[i] == '\t' }
	for {
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		if i >= len(l) {
			return depth
		}
		switch c := l[i]; {
		case c == '>':
			depth++
			i++
		case (c == '-' || c == '*' || c == '+') && blank(i+1):
			depth++
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && j-i < 10 && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j >= len(l) || (l[j] != '.' && l[j] != ')') || !blank(j+1) {
				return depth
			}
			depth++
			i = j + 1
		default:
			return depth
		}
	}
}
