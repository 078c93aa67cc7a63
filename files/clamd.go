package files

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/internal/clip"
)

// Clamd scans with a ClamAV daemon over its INSTREAM protocol: the
// content goes in length-prefixed chunks over one connection per file,
// and clamd answers once the zero-length end chunk arrives. Only the
// daemon needs signature databases; Switchyard holds no copy of a file
// beyond what it streams. The zero value is not usable: Addr is
// required. A Clamd is safe for concurrent use.
type Clamd struct {
	// Address of clamd: "tcp://host:port", "unix:///path/to/clamd.ctl",
	// or "host:port" for TCP. Required.
	Addr string

	// Time allowed to connect. Default: 5s.
	DialTimeout time.Duration

	// Time allowed for each chunk write and for the answer to PING.
	// Default: 30s.
	IOTimeout time.Duration

	// Time allowed, after the last chunk, for the verdict: clamd scans
	// only once it has the whole stream. Default: 2m.
	ScanTimeout time.Duration

	// Size of the chunks sent. Default: 64 KiB.
	ChunkSize int

	// Most bytes sent for one file. It must not exceed clamd's
	// StreamMaxLength, or clamd drops the connection; a file larger than
	// this gets no verdict. Default: 25 MiB, clamd's default
	// StreamMaxLength (raise both when uploads may be larger).
	MaxStreamBytes int64
}

// Clamd defaults.
const (
	DefaultClamdDialTimeout = 5 * time.Second
	DefaultClamdIOTimeout   = 30 * time.Second
	DefaultClamdScanTimeout = 2 * time.Minute
	DefaultClamdChunkSize   = 64 << 10
	DefaultClamdMaxStream   = 25 << 20
)

// ErrScanTooLarge is the error of a Verdict for content longer than
// MaxStreamBytes.
var ErrScanTooLarge = errors.New("clamd: content exceeds the scanner's stream limit")

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (c *Clamd) dial(ctx context.Context) (net.Conn, error) {
	network, addr, err := parseClamdAddr(c.Addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: orDefault(c.DialTimeout, DefaultClamdDialTimeout)}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("clamd: %w", err)
	}
	return conn, nil
}

func parseClamdAddr(s string) (network, addr string, err error) {
	if !strings.Contains(s, "://") {
		if s == "" {
			return "", "", errors.New("clamd: no address configured")
		}
		return "tcp", s, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "", fmt.Errorf("clamd: address %q: %w", s, err)
	}
	switch u.Scheme {
	case "tcp":
		if u.Host == "" {
			return "", "", fmt.Errorf("clamd: address %q has no host", s)
		}
		return "tcp", u.Host, nil
	case "unix":
		if u.Path == "" {
			return "", "", fmt.Errorf("clamd: address %q has no path", s)
		}
		return "unix", u.Path, nil
	}
	return "", "", fmt.Errorf("clamd: address %q: scheme must be tcp or unix", s)
}

// Ping checks that clamd answers.
func (c *Clamd) Ping(ctx context.Context) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(orDefault(c.IOTimeout, DefaultClamdIOTimeout)))
	if _, err := conn.Write([]byte("zPING\x00")); err != nil {
		return fmt.Errorf("clamd: ping: %w", ctxErr(ctx, err))
	}
	reply, err := readReply(conn)
	if err != nil {
		return fmt.Errorf("clamd: ping: %w", ctxErr(ctx, err))
	}
	if reply != "PONG" {
		return fmt.Errorf("clamd: ping answered %q", truncate(reply, 80))
	}
	return nil
}

// NewScan implements Scanner. It connects at once, so an unreachable
// clamd is known before any content is read.
func (c *Clamd) NewScan(ctx context.Context) (Scan, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	s := &clamdScan{
		c:     c,
		conn:  conn,
		ctx:   ctx,
		limit: orDefault(c.MaxStreamBytes, DefaultClamdMaxStream),
		io:    orDefault(c.IOTimeout, DefaultClamdIOTimeout),
	}
	s.stop = context.AfterFunc(ctx, func() { conn.Close() })
	s.buf = make([]byte, 4, 4+orDefault(c.ChunkSize, DefaultClamdChunkSize))
	conn.SetWriteDeadline(time.Now().Add(s.io))
	if _, err := conn.Write([]byte("zINSTREAM\x00")); err != nil {
		s.Close()
		return nil, fmt.Errorf("clamd: starting stream: %w", ctxErr(ctx, err))
	}
	return s, nil
}

type clamdScan struct {
	c     *Clamd
	conn  net.Conn
	ctx   context.Context
	stop  func() bool
	limit int64
	io    time.Duration

	buf  []byte // a frame being filled: 4-byte length, then data
	sent int64
	err  error // first failure; once set, content is dropped

	closeOnce sync.Once
}

func (s *clamdScan) Write(p []byte) (int, error) {
	n := len(p)
	if s.err != nil {
		return n, nil
	}
	if s.sent+int64(len(s.buf)-4)+int64(n) > s.limit {
		s.err = ErrScanTooLarge
		return n, nil
	}
	for len(p) > 0 {
		k := copy(s.buf[len(s.buf):cap(s.buf)], p)
		s.buf = s.buf[:len(s.buf)+k]
		p = p[k:]
		if len(s.buf) == cap(s.buf) {
			if err := s.flush(); err != nil {
				s.err = err
				return n, nil
			}
		}
	}
	return n, nil
}

func (s *clamdScan) flush() error {
	size := len(s.buf) - 4
	if size == 0 {
		return nil
	}
	binary.BigEndian.PutUint32(s.buf, uint32(size))
	s.conn.SetWriteDeadline(time.Now().Add(s.io))
	if _, err := s.conn.Write(s.buf); err != nil {
		return fmt.Errorf("clamd: sending content: %w", ctxErr(s.ctx, err))
	}
	s.sent += int64(size)
	s.buf = s.buf[:4]
	return nil
}

func (s *clamdScan) Verdict() (Verdict, error) {
	defer s.Close()
	if s.err != nil {
		return Verdict{}, s.err
	}
	if err := s.flush(); err != nil {
		return Verdict{}, err
	}
	s.conn.SetWriteDeadline(time.Now().Add(s.io))
	if _, err := s.conn.Write([]byte{0, 0, 0, 0}); err != nil {
		return Verdict{}, fmt.Errorf("clamd: ending stream: %w", ctxErr(s.ctx, err))
	}
	s.conn.SetReadDeadline(time.Now().Add(orDefault(s.c.ScanTimeout, DefaultClamdScanTimeout)))
	reply, err := readReply(s.conn)
	if err != nil {
		return Verdict{}, fmt.Errorf("clamd: reading verdict: %w", ctxErr(s.ctx, err))
	}
	return parseVerdict(reply)
}

func (s *clamdScan) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		s.conn.Close()
	})
	return nil
}

// maxReply bounds clamd's answer; real ones are a line.
const maxReply = 4096

// readReply reads one NUL-terminated answer to a z-prefixed command.
func readReply(conn net.Conn) (string, error) {
	r := bufio.NewReaderSize(conn, 512)
	var b []byte
	for len(b) <= maxReply {
		c, err := r.ReadByte()
		if err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				break // tolerate a missing terminator before close
			}
			return "", err
		}
		if c == 0 {
			return strings.TrimSpace(string(b)), nil
		}
		b = append(b, c)
	}
	if len(b) > maxReply {
		return "", errors.New("answer too long")
	}
	return strings.TrimSpace(string(b)), nil
}

// parseVerdict reads an INSTREAM answer: "stream: OK",
// "stream: <signature> FOUND", or "<reason> ERROR".
func parseVerdict(reply string) (Verdict, error) {
	if strings.HasSuffix(reply, " ERROR") {
		return Verdict{}, fmt.Errorf("clamd: %s", truncate(reply, 200))
	}
	rest, ok := strings.CutPrefix(reply, "stream: ")
	if !ok {
		return Verdict{}, fmt.Errorf("clamd: unexpected answer %q", truncate(reply, 80))
	}
	if rest == "OK" {
		return Verdict{}, nil
	}
	if sig, ok := strings.CutSuffix(rest, " FOUND"); ok && sig != "" {
		return Verdict{Infected: true, Signature: sig}, nil
	}
	return Verdict{}, fmt.Errorf("clamd: unexpected answer %q", truncate(reply, 80))
}

// ctxErr prefers the context's error to the connection error that
// closing the connection on cancellation caused.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clip.Bytes(s, n) + "..."
}

var _ Scanner = (*Clamd)(nil)
