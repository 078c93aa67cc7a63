//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlite

import "os"

// Without mmap the header is read with a pread each time.
func mapHeader(*os.File, int) []byte { return nil }

func unmapHeader([]byte) {}

func copyMapped(dst, src []byte) bool { return copy(dst, src) == len(dst) }
