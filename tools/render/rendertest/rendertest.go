// Package rendertest holds the checks the renderers' tests share.
package rendertest

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/tools/render"
)

// SourceError fails t unless err is a *render.SourceError with a message
// for the model, one that contains each of want, and returns it.
func SourceError(t testing.TB, err error, want ...string) *render.SourceError {
	t.Helper()
	var se *render.SourceError
	if !errors.As(err, &se) || se.Message == "" {
		t.Fatalf("error %v (%T) is not a *render.SourceError with a message", err, err)
	}
	for _, w := range want {
		if !strings.Contains(se.Message, w) {
			t.Errorf("message %q does not contain %q", se.Message, w)
		}
	}
	return se
}
