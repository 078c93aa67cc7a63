package files

import (
	"archive/zip"
	"encoding/binary"
	"encoding/xml"
	"io"
	"strings"
)

// Office Open XML files are zip archives. The format is decided by the
// package's [Content_Types].xml: the main part of a Word document or an
// Excel workbook, and that part present in the archive. Macro-enabled
// and template variants have other main types and are refused.
const (
	docxMainType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
	xlsxMainType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
)

// Bounds on what a hostile archive can make the check read or allocate.
// Real documents stay far below them.
const (
	maxZipEntries      = 20_000
	maxCentralDirBytes = 4 << 20
	maxContentTypes    = 1 << 20
)

const eocdLen = 22 // end of central directory record without its comment

// officeFormat returns FormatDOCX or FormatXLSX for the zip archive of
// the given size that r holds.
func officeFormat(r io.ReaderAt, size int64) (Format, error) {
	if err := checkZipDirectory(r, size); err != nil {
		return Format{}, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return Format{}, errInvalidFormat("The file is a damaged or unsupported zip archive.")
	}
	parts := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		parts[strings.ToLower(f.Name)] = f
	}
	ct := parts["[content_types].xml"]
	if ct == nil {
		return Format{}, errInvalidFormat("The zip archive is not a Word (docx) or Excel (xlsx) file.")
	}
	types, err := readContentTypes(ct)
	if err != nil {
		return Format{}, errInvalidFormat("The Office file's [Content_Types].xml is unreadable.")
	}
	var found []Format
	for _, o := range types.Overrides {
		part := strings.ToLower(strings.TrimPrefix(o.PartName, "/"))
		if parts[part] == nil {
			continue
		}
		switch {
		case o.ContentType == docxMainType && strings.HasPrefix(part, "word/"):
			found = append(found, FormatDOCX)
		case o.ContentType == xlsxMainType && strings.HasPrefix(part, "xl/"):
			found = append(found, FormatXLSX)
		}
	}
	for name := range parts {
		if strings.HasSuffix(name, "vbaproject.bin") {
			return Format{}, errInvalidFormat("Office files with macros are not accepted.")
		}
	}
	if len(found) != 1 {
		return Format{}, errInvalidFormat("The zip archive is not a Word (docx) or Excel (xlsx) file.")
	}
	return found[0], nil
}

// checkZipDirectory refuses archives whose central directory is not a
// plain, bounded block directly before the end record. archive/zip
// reads directory entries until one fails to parse, whatever count the
// end record gives, so without this a small file could make it allocate
// an entry for every 46 bytes. Office writers never use zip64 or
// trailing data for documents within the upload limit.
func checkZipDirectory(r io.ReaderAt, size int64) error {
	bad := errInvalidFormat("The file is a damaged or unsupported zip archive.")
	if size < eocdLen {
		return bad
	}
	tailLen := min(size, eocdLen+0xFFFF)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return bad
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
		return bad
	}
	e := tail[pos:]
	entriesHere := binary.LittleEndian.Uint16(e[8:])
	entries := binary.LittleEndian.Uint16(e[10:])
	dirSize := int64(binary.LittleEndian.Uint32(e[12:]))
	dirOffset := int64(binary.LittleEndian.Uint32(e[16:]))
	eocdAt := size - tailLen + int64(pos)
	switch {
	case binary.LittleEndian.Uint16(e[4:]) != 0 || binary.LittleEndian.Uint16(e[6:]) != 0: // multi-disk
		return bad
	case entries == 0xFFFF || entriesHere != entries || entries > maxZipEntries:
		return bad
	case dirSize > maxCentralDirBytes || dirOffset+dirSize != eocdAt:
		return bad
	}
	return nil
}

type contentTypes struct {
	Overrides []struct {
		PartName    string `xml:"PartName,attr"`
		ContentType string `xml:"ContentType,attr"`
	} `xml:"Override"`
}

func readContentTypes(f *zip.File) (contentTypes, error) {
	var t contentTypes
	rc, err := f.Open()
	if err != nil {
		return t, err
	}
	defer rc.Close()
	// Reading through a limit bounds decompression, whatever sizes the
	// archive claims.
	b, err := io.ReadAll(io.LimitReader(rc, maxContentTypes+1))
	if err != nil {
		return t, err
	}
	if len(b) > maxContentTypes {
		return t, io.ErrShortBuffer
	}
	err = xml.Unmarshal(b, &t)
	return t, err
}
