package accesslog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/switchyardhq/switchyard/internal/linebuffer"
)

func init() {
	caddy.RegisterModule(BufferedWriter{})
}

// Defaults of BufferedWriter: a busy gateway writes its access log in
// 64 KiB writes instead of one write(2) per line, and a quiet one within
// a tenth of a second of each line.
const (
	DefaultFlushSize     = 64 << 10
	DefaultFlushInterval = 100 * time.Millisecond
)

// BufferedWriter is a log writer (`output switchyard_buffered`) that
// gathers a log's lines in memory and hands them to another writer
// (stderr, stdout, a file) in one write when FlushSize bytes have
// gathered or FlushInterval has passed since the oldest unwritten line,
// whichever comes first. Syntax:
//
//	output switchyard_buffered {
//		to stderr                  any writer: stdout, file <path> {...}, net ...
//		flush_size 64KiB
//		flush_interval 100ms
//	}
//
// On a clean stop (SIGTERM, SIGINT, `caddy stop`) Caddy stops its
// servers, which finish their requests, then cleans up the config's
// modules: Cleanup writes what has gathered. The process's exit then
// writes anything logged since and turns the buffer into a plain
// writer: no line is lost. A reload writes what has gathered too, and
// the new config goes on with the same buffer. A crash (SIGKILL, a
// fatal runtime error, the machine going down) loses the lines not yet
// written: at most FlushSize bytes, logged within the last
// FlushInterval.
type BufferedWriter struct {
	// ToRaw is the writer the lines go to; stderr when unset.
	ToRaw json.RawMessage `json:"to,omitempty" caddy:"namespace=caddy.logging.writers inline_key=output"`

	// FlushSize is how many bytes gather before they are written; a
	// line as large or larger is written on its own. Default 64 KiB.
	FlushSize int `json:"flush_size,omitempty"`

	// FlushInterval bounds how long a line waits to be written.
	// Default 100ms.
	FlushInterval caddy.Duration `json:"flush_interval,omitempty"`

	to caddy.WriterOpener
}

// CaddyModule returns the Caddy module information.
func (BufferedWriter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.logging.writers.switchyard_buffered",
		New: func() caddy.Module { return new(BufferedWriter) },
	}
}

// Provision loads the writer the lines go to and applies the defaults.
func (bw *BufferedWriter) Provision(ctx caddy.Context) error {
	if bw.ToRaw == nil {
		bw.to = caddy.StderrWriter{}
	} else {
		mod, err := ctx.LoadModule(bw, "ToRaw")
		if err != nil {
			return fmt.Errorf("loading the writer of switchyard_buffered: %v", err)
		}
		to, ok := mod.(caddy.WriterOpener)
		if !ok {
			return fmt.Errorf("switchyard_buffered: %T is not a log writer", mod)
		}
		bw.to = to
	}
	if bw.FlushSize == 0 {
		bw.FlushSize = DefaultFlushSize
	}
	if bw.FlushInterval == 0 {
		bw.FlushInterval = caddy.Duration(DefaultFlushInterval)
	}
	return nil
}

// Validate refuses bounds that would hold lines forever or not at all.
func (bw *BufferedWriter) Validate() error {
	if bw.FlushSize < 0 || bw.FlushSize > 1<<30 {
		return errors.New("switchyard_buffered: flush_size must be positive and at most 1GiB (it is held in memory)")
	}
	if bw.FlushInterval < 0 {
		return errors.New("switchyard_buffered: flush_interval must be positive")
	}
	return nil
}

func (bw *BufferedWriter) String() string { return "buffered " + bw.to.String() }

// WriterKey tells Caddy's pool of open writers this writer apart from
// its destination opened unbuffered by another log, and keeps it open
// across a reload that keeps the same settings.
func (bw *BufferedWriter) WriterKey() string {
	return fmt.Sprintf("switchyard_buffered:%d:%d:%s", bw.FlushSize, bw.FlushInterval, bw.to.WriterKey())
}

// OpenWriter opens the destination and returns the buffer in front of it.
// Caddy opens a writer once per WriterKey and hands the same one to every
// later config that asks for that key.
func (bw *BufferedWriter) OpenWriter() (io.WriteCloser, error) {
	out, err := bw.to.OpenWriter()
	if err != nil {
		return nil, err
	}
	b := linebuffer.New(out, bw.FlushSize, time.Duration(bw.FlushInterval))
	openBuffersMu.Lock()
	openBuffers[bw.WriterKey()] = b
	openBuffersMu.Unlock()
	exitFlush.Do(func() { caddy.OnExit(flushAtExit) })
	return b, nil
}

// Cleanup writes what has gathered when the config that loaded this
// module is unloaded: on a stop, after the servers have finished their
// requests. Caddy (2.11) does not close log writers then, so this is
// what keeps a clean stop from losing lines; the buffer stays open for
// the next config, which may share it.
func (bw *BufferedWriter) Cleanup() error {
	openBuffersMu.Lock()
	b := openBuffers[bw.WriterKey()]
	openBuffersMu.Unlock()
	if b == nil {
		return nil
	}
	return b.Sync()
}

// openBuffers are the buffers OpenWriter made, by WriterKey: a module
// loaded by a later config finds the buffer it shares through its key.
var (
	openBuffersMu sync.Mutex
	openBuffers   = map[string]*linebuffer.Buffer{}
	exitFlush     sync.Once
)

// flushAtExit writes every buffer's lines and makes each write through
// from then on, for the lines of requests that outlived the servers'
// stop, up to the process's end.
func flushAtExit(context.Context) {
	openBuffersMu.Lock()
	defer openBuffersMu.Unlock()
	for _, b := range openBuffers {
		b.WriteThrough()
	}
}

// UnmarshalCaddyfile reads the block documented on BufferedWriter.
func (bw *BufferedWriter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the writer's name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "to":
			if !d.NextArg() {
				return d.ArgErr()
			}
			name := d.Val()
			var to caddy.WriterOpener
			// Caddy's standard streams live in its core package, which
			// cannot read a Caddyfile; its own `output` names them so too.
			switch name {
			case "stderr", "stdout", "discard":
				to = map[string]caddy.WriterOpener{"stderr": caddy.StderrWriter{}, "stdout": caddy.StdoutWriter{}, "discard": caddy.DiscardWriter{}}[name]
				if d.NextArg() {
					return d.ArgErr()
				}
			case "switchyard_buffered":
				return d.Err("switchyard_buffered cannot write to another switchyard_buffered")
			default:
				unm, err := caddyfile.UnmarshalModule(d, "caddy.logging.writers."+name)
				if err != nil {
					return err
				}
				var ok bool
				if to, ok = unm.(caddy.WriterOpener); !ok {
					return d.Errf("%s is not a log writer", name)
				}
			}
			bw.ToRaw = caddyconfig.JSONModuleObject(to, "output", name, nil)
		case "flush_size":
			if !d.NextArg() {
				return d.ArgErr()
			}
			n, err := humanize.ParseBytes(d.Val())
			if err != nil || n == 0 || n > 1<<30 {
				return d.Errf("flush_size: want a size such as 64KiB, not %q", d.Val())
			}
			bw.FlushSize = int(n)
			if d.NextArg() {
				return d.ArgErr()
			}
		case "flush_interval":
			if !d.NextArg() {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(d.Val())
			if err != nil || dur <= 0 {
				return d.Errf("flush_interval: want a duration such as 100ms, not %q", d.Val())
			}
			bw.FlushInterval = caddy.Duration(dur)
			if d.NextArg() {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized switchyard_buffered option %q", d.Val())
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.WriterOpener    = (*BufferedWriter)(nil)
	_ caddy.Provisioner     = (*BufferedWriter)(nil)
	_ caddy.Validator       = (*BufferedWriter)(nil)
	_ caddy.CleanerUpper    = (*BufferedWriter)(nil)
	_ caddyfile.Unmarshaler = (*BufferedWriter)(nil)
)
