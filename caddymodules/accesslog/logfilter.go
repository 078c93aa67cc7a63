package accesslog

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/logging"
	"go.uber.org/zap/zapcore"
)

func init() {
	caddy.RegisterModule(TrimFilter{})
}

// TrimFilter is a log field filter (`switchyard_trim`) for the access
// log's request URI and host: it drops the query and cuts the value to a
// number of characters, as the regexp filters `[?].*` → "" and
// `^(.{N}).+$` → "$1…" do, with the same output, without running a
// regexp on every line. Syntax:
//
//	request>uri switchyard_trim {
//		drop_query
//		max_chars 256
//	}
//
// A field that is not a string is dropped, not logged unfiltered: the
// filter stands between the log and what a client may have put in it.
type TrimFilter struct {
	// DropQuery removes from each "?" to the end of its line (a URI has
	// one line): the query, where a client may put a key.
	DropQuery bool `json:"drop_query,omitempty"`

	// MaxChars, when positive, cuts a value longer than this many
	// characters (runes; a byte that is not UTF-8 counts as one) to its
	// first MaxChars, followed by "…". As with the regexp, a value that
	// spans lines is left whole.
	MaxChars int `json:"max_chars,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (TrimFilter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.encoders.filter.switchyard_trim",
		New: func() caddy.Module { return new(TrimFilter) },
	}
}

// UnmarshalCaddyfile reads the block documented on TrimFilter.
func (f *TrimFilter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the filter's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "drop_query":
			if d.NextArg() {
				return d.ArgErr()
			}
			f.DropQuery = true
		case "max_chars":
			if !d.NextArg() {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(d.Val())
			if err != nil || n <= 0 {
				return d.Errf("max_chars: want a positive whole number, not %q", d.Val())
			}
			f.MaxChars = n
			if d.NextArg() {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized switchyard_trim option %q", d.Val())
		}
	}
	return nil
}

// Validate refuses a filter that would do nothing, which is a config
// mistake rather than a wish.
func (f *TrimFilter) Validate() error {
	if f.MaxChars < 0 {
		return fmt.Errorf("switchyard_trim: max_chars must be positive")
	}
	if !f.DropQuery && f.MaxChars == 0 {
		return fmt.Errorf("switchyard_trim: set drop_query, max_chars or both")
	}
	return nil
}

// Filter trims a string field and drops a field of any other type.
func (f *TrimFilter) Filter(in zapcore.Field) zapcore.Field {
	if in.Type != zapcore.StringType {
		in.Type = zapcore.SkipType
		return in
	}
	s := in.String
	if f.DropQuery {
		s = dropQuery(s)
	}
	if f.MaxChars > 0 {
		s = cutChars(s, f.MaxChars)
	}
	in.String = s
	return in
}

// dropQuery removes from each "?" to the next newline or the end, as
// replacing `[?].*` with "" does (`.` stops at a newline).
func dropQuery(s string) string {
	i := strings.IndexByte(s, '?')
	if i < 0 {
		return s
	}
	if strings.IndexByte(s[i:], '\n') < 0 {
		return s[:i]
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '?')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return b.String()
		}
		s = s[i+j:]
	}
}

// cutChars cuts s to its first n characters followed by "…" when it has
// more than n, as replacing `^(.{n}).+$` with "$1…" does: a character is
// a rune, a byte that is not UTF-8 counts as one, and a value with a
// newline is not matched at all.
func cutChars(s string, n int) string {
	if len(s) <= n {
		return s // n bytes are at most n characters
	}
	end, count := 0, 0
	for end < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
		count++
	}
	if end == len(s) || strings.IndexByte(s, '\n') >= 0 {
		return s
	}
	return s[:end] + "…"
}

// Interface guards
var (
	_ logging.LogFieldFilter = (*TrimFilter)(nil)
	_ caddyfile.Unmarshaler  = (*TrimFilter)(nil)
	_ caddy.Validator        = (*TrimFilter)(nil)
)
