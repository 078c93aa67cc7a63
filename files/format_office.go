package files

import (
	"archive/zip"
	"encoding/xml"
	"io"
	"strings"

	"github.com/switchyardhq/switchyard/files/internal/zipdir"
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
const maxContentTypes = 1 << 20

// officeFormat returns FormatDOCX or FormatXLSX for the zip archive of
// the given size that r holds.
func officeFormat(r io.ReaderAt, size int64) (Format, error) {
	if err := zipdir.Check(r, size); err != nil {
		return Format{}, errInvalidFormat("The file is a damaged or unsupported zip archive.")
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
