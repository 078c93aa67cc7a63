// Package render holds what the file renderers share. Each renderer lives
// in a sub-package (pdf, docx, xlsx, chart, diagram) and is a plain
// library: a source in, file bytes out, deterministic and bounded in time
// and memory. None of them knows about requests, accounts or storage; the
// tools that call them do.
package render

import "fmt"

// SourceError is a problem with the source a renderer was given (a chart
// spec that does not parse, a sheet name Excel refuses, a DOT syntax
// error). Its message is written for the model that wrote the source, so
// that it can correct it; nothing internal goes in it.
type SourceError struct {
	Message string
}

func (e *SourceError) Error() string { return e.Message }

// Errorf returns a *SourceError with a formatted message.
func Errorf(format string, args ...any) error {
	return &SourceError{Message: fmt.Sprintf(format, args...)}
}

// Themes of the picture renderers (chart, diagram).
const (
	ThemeLight = "light"
	ThemeDark  = "dark"
)

// Aspects of the picture renderers (chart, diagram).
const (
	AspectLandscape = "landscape"
	AspectPortrait  = "portrait"
	AspectSquare    = "square"
)
