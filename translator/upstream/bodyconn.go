package upstream

import (
	"context"
	"io"
	"net"
	"sync"
)

// bodyCopyConn is a connection to the backend whose ReadFrom copies
// through a pooled buffer. The transport writes a request's body with
// the connection's ReadFrom, through an io.LimitedReader of the body's
// length, and a *net.TCPConn's ReadFrom copies anything that is neither
// a file nor a socket through a buffer it allocates for the call, as
// large as the body (up to 32 KiB): about 9 KiB of garbage a round with
// the demo's tools, the largest single piece a /v3 request leaves to the
// collector. The client's bodies are never files or sockets, which the
// connection's own ReadFrom would splice or send without a copy. A
// connection the transport wraps in TLS is written with Write only and
// gains nothing.
type bodyCopyConn struct{ net.Conn }

// copyBufs holds the buffers of bodyCopyConn's ReadFrom, of io.Copy's
// size, so that a body goes out in as few writes as io.Copy makes.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (c *bodyCopyConn) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer((*connWriter)(c), r, *buf)
}

// connWriter is the connection as a bare writer: io.CopyBuffer would
// hand the copy to the connection's own ReadFrom, which allocates.
type connWriter bodyCopyConn

func (w *connWriter) Write(p []byte) (int, error) { return w.Conn.Write(p) }

// dialBodyCopy dials with dial and wraps the connection in bodyCopyConn.
func dialBodyCopy(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyCopyConn{c}, nil
	}
}
