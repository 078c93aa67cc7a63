package files_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
)

// fakeClamd is a minimal clamd for protocol tests. answer decides the
// reply from the command and the reassembled stream; an empty answer
// means never reply.
type fakeClamd struct {
	addr   string
	mu     sync.Mutex
	got    [][]byte // reassembled INSTREAM contents
	chunks []int    // chunk sizes received
}

func startFakeClamd(t *testing.T, network string, answer func(cmd string, stream []byte) string) *fakeClamd {
	t.Helper()
	var ln net.Listener
	var err error
	f := &fakeClamd{}
	if network == "unix" {
		sock := filepath.Join(t.TempDir(), "clamd.sock")
		ln, err = net.Listen("unix", sock)
		f.addr = "unix://" + sock
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			f.addr = "tcp://" + ln.Addr().String()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { f.serve(t, conn, answer) })
		}
	})
	return f
}

func (f *fakeClamd) serve(t *testing.T, conn net.Conn, answer func(string, []byte) string) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	cmd, err := r.ReadString(0)
	if err != nil {
		return
	}
	cmd = strings.TrimSuffix(cmd, "\x00")
	var stream []byte
	if cmd == "zINSTREAM" {
		for {
			var n uint32
			if err := binary.Read(r, binary.BigEndian, &n); err != nil {
				return
			}
			if n == 0 {
				break
			}
			buf := make([]byte, n)
			if _, err := io.ReadFull(r, buf); err != nil {
				return
			}
			f.mu.Lock()
			f.chunks = append(f.chunks, int(n))
			f.mu.Unlock()
			stream = append(stream, buf...)
		}
		f.mu.Lock()
		f.got = append(f.got, stream)
		f.mu.Unlock()
	}
	reply := answer(cmd, stream)
	if reply == "" {
		io.Copy(io.Discard, r) // hang until the client gives up
		return
	}
	conn.Write([]byte(reply))
}

func scanAll(c *files.Clamd, data []byte, writeSize int) (files.Verdict, error) {
	s, err := c.NewScan(context.Background())
	if err != nil {
		return files.Verdict{}, err
	}
	defer s.Close()
	for i := 0; i < len(data); i += writeSize {
		s.Write(data[i:min(i+writeSize, len(data))])
	}
	return s.Verdict()
}

func TestClamdProtocol(t *testing.T) {
	standard := func(cmd string, stream []byte) string {
		switch {
		case cmd == "zPING":
			return "PONG\x00"
		case bytes.Contains(stream, []byte("MALWARE")):
			return "stream: Test.Malware FOUND\x00"
		}
		return "stream: OK\x00"
	}
	tests := []struct {
		name     string
		network  string
		answer   func(string, []byte) string
		cfg      files.Clamd
		data     []byte
		want     files.Verdict
		wantErr  string
		noServer bool
	}{
		{name: "clean", answer: standard, data: []byte("hello"), want: files.Verdict{}},
		{name: "clean over unix socket", network: "unix", answer: standard, data: []byte("hello")},
		{name: "infected", answer: standard, data: []byte("xx MALWARE xx"), want: files.Verdict{Infected: true, Signature: "Test.Malware"}},
		{name: "empty content", answer: standard, data: nil},
		{name: "clamd error", answer: func(string, []byte) string { return "INSTREAM size limit exceeded. ERROR\x00" },
			data: []byte("x"), wantErr: "size limit exceeded"},
		{name: "garbage answer", answer: func(string, []byte) string { return "HTTP/1.1 400 Bad Request\r\n\r\n\x00" },
			data: []byte("x"), wantErr: "unexpected answer"},
		{name: "found without signature", answer: func(string, []byte) string { return "stream:  FOUND\x00" },
			data: []byte("x"), wantErr: "unexpected answer"},
		{name: "answer without terminator then close", answer: func(string, []byte) string { return "stream: OK" },
			data: []byte("x")},
		{name: "endless answer", answer: func(string, []byte) string { return strings.Repeat("A", 10000) },
			data: []byte("x"), wantErr: "too long"},
		{name: "no verdict in time", answer: func(string, []byte) string { return "" },
			cfg: files.Clamd{ScanTimeout: 100 * time.Millisecond}, data: []byte("x"), wantErr: "timeout"},
		{name: "over the stream limit", answer: standard,
			cfg: files.Clamd{MaxStreamBytes: 10}, data: []byte("eleven byte"), wantErr: "stream limit"},
		{name: "unreachable", noServer: true, wantErr: "connect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			if tc.noServer {
				ln, _ := net.Listen("tcp", "127.0.0.1:0")
				c.Addr = ln.Addr().String() // bare host:port form
				ln.Close()
				_, err := c.NewScan(context.Background())
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewScan error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			c.Addr = startFakeClamd(t, tc.network, tc.answer).addr
			got, err := scanAll(&c, tc.data, 7)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Verdict = %+v, %v; want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Verdict = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestClamdChunking(t *testing.T) {
	fake := startFakeClamd(t, "tcp", func(string, []byte) string { return "stream: OK\x00" })
	c := files.Clamd{Addr: fake.addr, ChunkSize: 1000}
	data := bytes.Repeat([]byte("0123456789"), 550) // 5500 bytes
	if _, err := scanAll(&c, data, 333); err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.got) != 1 || !bytes.Equal(fake.got[0], data) {
		t.Fatalf("clamd received %d streams, want the content once", len(fake.got))
	}
	if want := []int{1000, 1000, 1000, 1000, 1000, 500}; !equalInts(fake.chunks, want) {
		t.Fatalf("chunks = %v, want %v", fake.chunks, want)
	}
}

func equalInts(a, b []int) bool { return bytes.Equal(intsBytes(a), intsBytes(b)) }

func intsBytes(a []int) []byte {
	var b []byte
	for _, v := range a {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func TestClamdCancel(t *testing.T) {
	fake := startFakeClamd(t, "tcp", func(string, []byte) string { return "" })
	c := files.Clamd{Addr: fake.addr}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.NewScan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("x"))
	done := make(chan error, 1)
	go func() { _, err := s.Verdict(); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Verdict after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Verdict did not return after the context was cancelled")
	}
}

func TestClamdPing(t *testing.T) {
	fake := startFakeClamd(t, "tcp", func(cmd string, _ []byte) string {
		if cmd == "zPING" {
			return "PONG\x00"
		}
		return "UNKNOWN COMMAND\x00"
	})
	if err := (&files.Clamd{Addr: fake.addr}).Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	bad := startFakeClamd(t, "tcp", func(string, []byte) string { return "NOPE\x00" })
	if err := (&files.Clamd{Addr: bad.addr}).Ping(context.Background()); err == nil {
		t.Fatal("Ping accepted a wrong answer")
	}
	for _, addr := range []string{"", "http://x", "tcp://", "unix://"} {
		if err := (&files.Clamd{Addr: addr}).Ping(context.Background()); err == nil {
			t.Errorf("Ping(%q) succeeded", addr)
		}
	}
}

// realClamdAddr returns the address of a real clamd: the one in
// SWITCHYARD_TEST_CLAMD_ADDR, which must answer, or else one started by
// scripts/clamd-test.sh for this test. Never skips: without clamd the
// test fails and says how to get one.
func realClamdAddr(t *testing.T) string {
	t.Helper()
	if addr := os.Getenv("SWITCHYARD_TEST_CLAMD_ADDR"); addr != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := (&files.Clamd{Addr: addr}).Ping(ctx); err != nil {
			t.Fatalf("SWITCHYARD_TEST_CLAMD_ADDR=%s does not answer: %v (start it with scripts/clamd-test.sh start, or unset the variable to let the test start one)", addr, err)
		}
		return addr
	}
	dir := t.TempDir()
	script, _ := filepath.Abs("../scripts/clamd-test.sh")
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("starting clamd with %s: %v: %s (install it with apt-get install -y clamav-daemon, or set SWITCHYARD_TEST_CLAMD_ADDR)", script, err, stderr)
	}
	t.Cleanup(func() { exec.Command(script, "stop", dir).Run() })
	return strings.TrimSpace(string(out))
}

func TestClamdReal(t *testing.T) {
	c := &files.Clamd{Addr: realClamdAddr(t), ChunkSize: 3} // tiny chunks: the signature spans many
	ctx := context.Background()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	v, err := scanAll(c, eicar(), 5)
	if err != nil {
		t.Fatalf("scanning EICAR: %v", err)
	}
	if !v.Infected || !strings.Contains(strings.ToLower(v.Signature), "eicar") {
		t.Fatalf("EICAR verdict = %+v, want infected with an EICAR signature", v)
	}
	v, err = scanAll(c, []byte("an ordinary text file\n"), 5)
	if err != nil || v.Infected {
		t.Fatalf("clean verdict = %+v, %v; want clean", v, err)
	}
}
