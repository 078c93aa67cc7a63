package tools

import (
	"encoding/json"
	"strings"
)

// defaultLabels are the timeline labels of the public tools.
var defaultLabels = map[string]string{
	NameWebSearch:          "Searching the web",
	NameOpenURL:            "Reading a web page",
	NameCreateDocument:     "Creating a PDF document",
	NameCreateSpreadsheet:  "Creating a spreadsheet",
	NameCreateWordDocument: "Creating a Word document",
	NameCreateChart:        "Creating a chart",
	NameCreateDiagram:      "Creating a diagram",
	NameUpdateObject:       "Updating a file",
	NameDeleteObject:       "Deleting a file",
	NameRemember:           "Remembering",
}

// LabelFor returns the activity label of a call: the tool's own label if
// it is a Labeler, else a fixed label for the public tool names, else the
// name with underscores as spaces.
func LabelFor(t Tool, name string, args json.RawMessage) string {
	if l, ok := t.(Labeler); ok {
		if s := l.Label(args); s != "" {
			return s
		}
	}
	if s, ok := defaultLabels[name]; ok {
		return s
	}
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return "Running a tool"
	}
	return "Running " + s
}
