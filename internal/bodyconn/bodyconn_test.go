package bodyconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// connPair is a client connection and the server's end of it.
func connPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = Dial((&net.Dialer{}).DialContext)(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

// A body is written through Conn's pooled buffer: it arrives whole, and
// writing it allocates nothing of its size, where a *net.TCPConn's own
// ReadFrom allocates a buffer as large as the body.
func TestConnWritesWithoutABufferOfItsOwn(t *testing.T) {
	client, server := connPair(t)
	body := bytes.Repeat([]byte("0123456789abcdef"), 600) // 9,600 bytes
	const rounds = 50
	// Read into room made beforehand, so that the reader allocates
	// nothing while the copies are counted.
	received := make(chan []byte)
	got := make([]byte, rounds*len(body))
	go func() {
		n, _ := io.ReadFull(server, got)
		received <- got[:n]
	}()

	conn := client.(*Conn)
	copyOnce := func() {
		// As the transport hands it over: the body behind a limit of
		// its length.
		n, err := conn.ReadFrom(io.LimitReader(bytes.NewReader(body), int64(len(body))))
		if err != nil || n != int64(len(body)) {
			t.Fatalf("ReadFrom: %d bytes, %v; want %d", n, err, len(body))
		}
	}
	copyOnce() // the pool's first buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds - 1 {
		copyOnce()
	}
	runtime.ReadMemStats(&after)
	if perCopy := (after.TotalAlloc - before.TotalAlloc) / (rounds - 1); perCopy >= uint64(len(body))/2 && !testenv.RaceEnabled {
		t.Errorf("a copy of %d bytes allocated %d bytes", len(body), perCopy)
	}
	if got := <-received; !bytes.Equal(got, bytes.Repeat(body, rounds)) {
		t.Errorf("the server read %d bytes, not the %d written", len(got), rounds*len(body))
	}
}

// CloseWrite ends the client's direction of a TCP connection and leaves
// the other open, as the connection's own does.
func TestConnClosesItsWriteHalf(t *testing.T) {
	client, server := connPair(t)
	if err := client.(*Conn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := server.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("the server read %d bytes, %v; want the end", n, err)
	}
	if _, err := server.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(client, make([]byte, 1)); err != nil {
		t.Errorf("the client's read half: %v", err)
	}
}

// A connection that cannot close its write half says so, as net/http
// says of one.
func TestConnWithoutCloseWrite(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := (&Conn{a}).CloseWrite(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("CloseWrite: %v, want errors.ErrUnsupported", err)
	}
}
