// Package zipdir checks the central directory of a zip archive before
// archive/zip reads it. The upload format check (package files) and the
// text extraction of docx and xlsx files (package extract) both use it.
package zipdir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Bounds on the central directory of a zip archive (docx, xlsx). Office
// writers stay far below them.
const (
	maxZipEntries      = 20_000
	maxCentralDirBytes = 4 << 20
)

const eocdLen = 22 // end of central directory record without its comment

// ErrLimit is wrapped by Check's errors for archives over its bounds,
// as opposed to damaged ones.
var ErrLimit = errors.New("zip archive over the limits")

// Check refuses archives whose central directory is not a
// plain, bounded block directly before the end record: archive/zip reads
// directory entries until one fails to parse, whatever count the end
// record gives, so without this check a small file could make it allocate
// an entry for every 46 bytes. Multi-disk, zip64 and trailing data are
// refused too; office writers never use them for documents within the
// upload limit.
func Check(r io.ReaderAt, size int64) error {
	if size < eocdLen {
		return errors.New("not a zip archive")
	}
	tailLen := min(size, eocdLen+0xFFFF)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return err
	}
	pos := -1
	for i := len(tail) - eocdLen; i >= 0; i-- {
		if string(tail[i:i+4]) == "PK\x05\x06" &&
			i+eocdLen+int(binary.LittleEndian.Uint16(tail[i+20:])) == len(tail) {
			pos = i
			break
		}
	}
	if pos < 0 {
		return errors.New("no zip end record")
	}
	e := tail[pos:]
	entriesHere := binary.LittleEndian.Uint16(e[8:])
	entries := binary.LittleEndian.Uint16(e[10:])
	dirSize := int64(binary.LittleEndian.Uint32(e[12:]))
	dirOffset := int64(binary.LittleEndian.Uint32(e[16:]))
	eocdAt := size - tailLen + int64(pos)
	switch {
	case binary.LittleEndian.Uint16(e[4:]) != 0 || binary.LittleEndian.Uint16(e[6:]) != 0:
		return errors.New("multi-disk zip archives are not read")
	case entries == 0xFFFF || dirSize == 0xFFFFFFFF:
		return errors.New("zip64 archives are not read")
	case entriesHere != entries:
		return errors.New("the zip end record contradicts itself")
	case entries > maxZipEntries:
		return fmt.Errorf("%w: %d entries, over %d", ErrLimit, entries, maxZipEntries)
	case dirSize > maxCentralDirBytes:
		return fmt.Errorf("%w: a directory of %d bytes, over %d", ErrLimit, dirSize, maxCentralDirBytes)
	case dirOffset+dirSize != eocdAt:
		return errors.New("the zip directory is not where the end record says")
	}
	return nil
}
