package sqlite

import (
	"bytes"
	"encoding/binary"
	"os"

	"github.com/switchyardhq/switchyard/storage"
)

// walIndex reads the header of the database's wal-index, the -shm file
// that every connection in WAL mode, in any process, shares through
// mmap (https://www.sqlite.org/walformat.html, section 2.5). Every
// commit rewrites it, so comparing two readings tells whether anything
// was committed in between, for the cost of a memory read instead of the
// statement a PRAGMA data_version would be (in modernc's SQLite a
// statement costs as much as the key read it would save).
//
// The header's fields are in the machine's byte order, and SQLite keeps
// two copies of it: a commit writes the second, then the first, and a
// reader that finds them different retries, as SQLite's own do.
type walIndex struct {
	f   *os.File
	hdr []byte // the mapped header, or nil: then each reading is a pread
}

const (
	walIndexHdrSize = 48
	// Offsets in a WalIndexHdr.
	hdrChange  = 8  // u32, raised by every commit
	hdrIsInit  = 12 // u8, 1 once the header is valid
	hdrMxFrame = 16 // u32, the last committed frame of the WAL
	hdrSalt    = 32 // 2 x u32, new every time the WAL starts over
)

func openWALIndex(path string) (*walIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &walIndex{f: f, hdr: mapHeader(f, 2*walIndexHdrSize)}, nil
}

// revision reads the header. The change counter and the last frame name
// the committed state within one generation of the WAL, the salts the
// generation: a commit always raises the counter, and a checkpoint that
// starts the WAL over changes the salts.
func (w *walIndex) revision() (storage.Revision, bool) {
	var b [2 * walIndexHdrSize]byte
	for range 16 {
		if !w.read(b[:]) {
			return storage.Revision{}, false // not initialised yet
		}
		h := b[:walIndexHdrSize]
		if !bytes.Equal(h, b[walIndexHdrSize:]) {
			continue // a commit is writing it
		}
		if h[hdrIsInit] != 1 {
			return storage.Revision{}, false
		}
		e := binary.NativeEndian
		salts := uint64(e.Uint32(h[hdrSalt:]))<<32 | uint64(e.Uint32(h[hdrSalt+4:]))
		frames := uint64(e.Uint32(h[hdrChange:]))<<32 | uint64(e.Uint32(h[hdrMxFrame:]))
		return storage.NewRevision(salts, frames), true
	}
	return storage.Revision{}, false
}

// read copies both header copies into b.
func (w *walIndex) read(b []byte) bool {
	if w.hdr != nil {
		return copyMapped(b, w.hdr)
	}
	n, _ := w.f.ReadAt(b, 0)
	return n == len(b)
}

func (w *walIndex) close() error {
	unmapHeader(w.hdr)
	return w.f.Close()
}
