package translator

import (
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/translator/wire"
)

func clipStepData(s string) string {
	if utf8.RuneCountInString(s) <= wire.MaxStepDataChars {
		return s
	}
	return clip.Runes(s, wire.MaxStepDataChars)
}

func ptr[T any](v T) *T { return &v }
