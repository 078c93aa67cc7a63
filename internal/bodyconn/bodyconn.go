// Package bodyconn wraps a client's connections so that a request's
// body is written through a pooled buffer.
//
// net/http's transport writes an HTTP/1 request's body into its write
// buffer after the headers and, once that is full and flushed, hands
// the rest to the connection's ReadFrom, through an io.LimitedReader of
// the body's length, in memory or not. A *net.TCPConn's ReadFrom copies
// anything that is neither a file nor a socket through a buffer it
// allocates for the call, as large as the rest (up to 32 KiB). A client's bodies are
// never files or sockets, which the connection's own ReadFrom would
// splice or send without a copy.
//
// A TLS connection is left as it is: net/http reads the protocol it
// negotiated (HTTP/2) and its state off the *tls.Conn, which a wrapper
// would hide. Its body still goes through a buffer as large as the body
// that io.Copy makes for the call, a *tls.Conn having no ReadFrom; the
// plain connection under it is written with Write only, and gains
// nothing from being wrapped.
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
