//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite

import (
	"os"
	"runtime/debug"
	"syscall"
)

// mapHeader maps the first n bytes of the wal-index, as SQLite itself
// does, so that a reading is a copy from memory rather than a pread (a
// system call, several microseconds on a virtual machine). It returns nil
// where the file is not yet that long or cannot be mapped.
//
// The file cannot shrink under the mapping while the store holds its
// pinned connection: SQLite truncates a wal-index only when it finds no
// other connection of any process using it. copyMapped still turns a
// fault into a failed reading rather than a crash.
func mapHeader(f *os.File, n int) []byte {
	fi, err := f.Stat()
	if err != nil || fi.Size() < int64(n) {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

func unmapHeader(b []byte) {
	if b != nil {
		_ = syscall.Munmap(b)
	}
}

// copyMapped copies src, a mapping, into dst, and reports false if the
// mapping faulted (the file was cut short behind SQLite's back).
func copyMapped(dst, src []byte) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	copy(dst, src)
	return true
}
