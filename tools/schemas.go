package tools

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Names of the tools offered to the upstream model. Together with the
// schemas below they are a public contract for people who tune backends;
// docs/tools.md documents both and a test keeps it in step with this file.
const (
	NameWebSearch          = "web_search"
	NameOpenURL            = "open_url"
	NameCreateDocument     = "create_document"
	NameCreateSpreadsheet  = "create_spreadsheet"
	NameCreateWordDocument = "create_word_document"
	NameCreateChart        = "create_chart"
	NameCreateDiagram      = "create_diagram"
	NameUpdateObject       = "update_object"
	NameDeleteObject       = "delete_object"
	NameRemember           = "remember"
)

// Schemas maps each tool name to the JSON schema of its arguments. Tool
// implementations return these from Schema, so that what the model is
// told and what docs/tools.md says cannot drift apart.
var Schemas = map[string]json.RawMessage{
	NameWebSearch:          schemaWebSearch,
	NameOpenURL:            schemaOpenURL,
	NameCreateDocument:     schemaCreateDocument,
	NameCreateSpreadsheet:  schemaCreateSpreadsheet,
	NameCreateWordDocument: schemaCreateWordDocument,
	NameCreateChart:        schemaCreateChart,
	NameCreateDiagram:      schemaCreateDiagram,
	NameUpdateObject:       schemaUpdateObject,
	NameDeleteObject:       schemaDeleteObject,
	NameRemember:           schemaRemember,
}

// toolArguments is the schema of a tool's arguments: an object with the
// given properties, of which required must be present, and no others.
// properties are JSON members, one a line, indented four spaces; the
// schema is written out as if in full, for its bytes go upstream as they
// are and count in prompt estimates.
func toolArguments(properties string, required ...string) json.RawMessage {
	quoted := make([]string, len(required))
	for i, r := range required {
		quoted[i] = strconv.Quote(r)
	}
	return json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {" + properties +
		"\n  },\n  \"required\": [" + strings.Join(quoted, ", ") + "],\n  \"additionalProperties\": false\n}")
}

var schemaWebSearch = toolArguments(`
    "query": {"type": "string", "description": "What to search the web for, as a search engine query."}`,
	"query")

var schemaOpenURL = toolArguments(`
    "url": {"type": "string", "description": "Absolute http or https URL of the page to read."}`,
	"url")

var schemaCreateDocument = toolArguments(`
    "title": {"type": "string", "description": "Document title, also its file name."},
    "markdown": {"type": "string", "description": "Body in Markdown. Embed an existing chart, diagram or image with ![caption](ID) where ID is its object id (obj<N> or el<N>)."}`,
	"title", "markdown")

var schemaCreateSpreadsheet = toolArguments(`
    "title": {"type": "string", "description": "Workbook title, also its file name."},
    "sheets": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "description": "Sheet name, at most 31 characters."},
          "rows": {
            "type": "array",
            "description": "Rows top to bottom; the first row is the header row.",
            "items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}
          }
        },
        "required": ["name", "rows"],
        "additionalProperties": false
      }
    }`,
	"title", "sheets")

var schemaCreateWordDocument = toolArguments(`
    "title": {"type": "string", "description": "Document title, also its file name."},
    "markdown": {"type": "string", "description": "Body in Markdown. Embed an existing chart, diagram or image with ![caption](ID) where ID is its object id."}`,
	"title", "markdown")

var schemaCreateChart = toolArguments(`
    "title": {"type": "string", "description": "Chart title."},
    "spec": {
      "type": "object",
      "properties": {
        "type": {"type": "string", "enum": ["bar", "line", "area", "pie", "scatter"]},
        "stacked": {"type": "boolean", "description": "Bar and area charts: stack the series instead of placing them side by side. Default: false."},
        "x_label": {"type": "string"},
        "y_label": {"type": "string"},
        "y_format": {"type": "string", "enum": ["number", "percent", "currency"], "description": "How values are written. percent: values are percentages (12.5 is 12.5%). Default: number, or currency when currency is set."},
        "x_format": {"type": "string", "enum": ["number", "percent", "currency"], "description": "Scatter charts only: how x values are written. Default: number."},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code for currency values. Default: USD."},
        "theme": {"type": "string", "enum": ["light", "dark"], "description": "Colour theme. Default: light."},
        "aspect": {"type": "string", "enum": ["landscape", "portrait", "square"], "description": "Picture shape. Default: landscape."},
        "labels": {"type": "array", "items": {"type": "string"}, "description": "Category labels for bar, line, area and pie charts, one per value."},
        "series": {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "object",
            "properties": {
              "name": {"type": "string"},
              "values": {"type": "array", "items": {"type": "number"}, "description": "One value per label (bar, line, area, pie)."},
              "points": {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}, "description": "[x, y] pairs (scatter)."}
            },
            "required": ["name"],
            "additionalProperties": false
          }
        }
      },
      "required": ["type", "series"],
      "additionalProperties": false
    }`,
	"title", "spec")

var schemaCreateDiagram = toolArguments(`
    "title": {"type": "string", "description": "Diagram title."},
    "source": {"type": "string", "description": "Diagram source in the given language."},
    "language": {"type": "string", "enum": ["dot"], "description": "Source language: dot is Graphviz DOT."},
    "theme": {"type": "string", "enum": ["light", "dark"], "description": "Colour theme. Default: light."},
    "aspect": {"type": "string", "enum": ["landscape", "portrait", "square"], "description": "Preferred shape. Default: landscape."}`,
	"title", "source", "language")

var schemaUpdateObject = toolArguments(`
    "object_id": {"type": "string", "pattern": "^(obj|el)[1-9][0-9]*$", "description": "Id of the object to change, from the objects listed in the conversation."},
    "title": {"type": "string", "description": "New title. Default: unchanged."},
    "markdown": {"type": "string", "description": "Whole new body of a document or docx object."},
    "sheets": {
      "type": "array",
      "description": "Whole new sheets of an xlsx object, shaped as in create_spreadsheet.",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string"},
          "rows": {"type": "array", "items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}}
        },
        "required": ["name", "rows"],
        "additionalProperties": false
      }
    },
    "spec": {"type": "object", "description": "Whole new spec of a chart object, shaped as in create_chart."},
    "source": {"type": "string", "description": "Whole new source of a diagram object."},
    "language": {"type": "string", "enum": ["dot"], "description": "Language of source. Default: unchanged."}`,
	"object_id")

var schemaDeleteObject = toolArguments(`
    "object_id": {"type": "string", "pattern": "^(obj|el)[1-9][0-9]*$", "description": "Id of the object to delete. Its id is retired for good."}`,
	"object_id")

var schemaRemember = toolArguments(`
    "fact": {"type": "string", "description": "One short fact about the user worth keeping for later conversations, written in the third person."}`,
	"fact")
