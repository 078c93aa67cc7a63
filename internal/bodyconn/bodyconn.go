// Package bodyconn wraps a client's connections so that a request's
// body is written through a pooled buffer.
//
// net/http's transport writes a body it does not know to be in memory
// with the connection's ReadFrom, through an io.LimitedReader of the
// body's length, and a *net.TCPConn's ReadFrom copies anything that is
// neither a file nor a socket through a buffer it allocates for the
// call, as large as the body (up to 32 KiB). A client's bodies are
// never files or sockets, which the connection's own ReadFrom would
// splice or send without a copy. A connection the transport wraps in
// TLS is written with Write only and gains nothing.
package bodyconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Conn is a connection whose ReadFrom copies through a pooled buffer.
type Conn struct{ net.Conn }

// copyBufs holds the buffers of Conn's ReadFrom, of io.Copy's size, so
// that a body goes out in as few writes as io.Copy makes.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer((*connWriter)(c), r, *buf)
}

// errNoCloseWrite is CloseWrite's error on a connection that cannot
// close its write half alone.
var errNoCloseWrite = fmt.Errorf("bodyconn: CloseWrite: %w", errors.ErrUnsupported)

// CloseWrite closes the connection's write half, as the TCP or Unix
// socket it wraps would: net/http hands it on to a switched protocol's
// tunnel, which ends one direction with it.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errNoCloseWrite
}

// connWriter is the connection as a bare writer: io.CopyBuffer would
// hand the copy to the connection's own ReadFrom, which allocates.
type connWriter Conn

func (w *connWriter) Write(p []byte) (int, error) { return w.Conn.Write(p) }

// DialFunc is the dialer of http.Transport's DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dial dials with dial and wraps the connection in a Conn.
func Dial(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &Conn{c}, nil
	}
}
