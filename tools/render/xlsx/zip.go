package xlsx

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"io/fs"
	"sort"
	"sync"
	"time"

	"github.com/xuri/excelize/v2"
)

// zipTime is the modification time of every part: the earliest a zip
// header can hold, so that nothing in the archive depends on the clock.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// sortedZip is an excelize.ZipWriter that writes the parts in a fixed
// order when closed. excelize writes streamed sheets in map order, which
// varies from run to run; this puts [Content_Types].xml first (where
// format sniffers look for it) and the rest by name.
type sortedZip struct {
	w     io.Writer
	parts map[string]*bytes.Buffer
}

func newSortedZip(w io.Writer) excelize.ZipWriter {
	return &sortedZip{w: w, parts: make(map[string]*bytes.Buffer)}
}

func (z *sortedZip) Create(name string) (io.Writer, error) {
	if _, dup := z.parts[name]; dup {
		return nil, errors.New("duplicate zip part " + name)
	}
	b := new(bytes.Buffer)
	z.parts[name] = b
	return b, nil
}

func (z *sortedZip) AddFS(fs.FS) error {
	return errors.New("adding a file system is not supported")
}

func (z *sortedZip) Close() error {
	names := make([]string, 0, len(z.parts))
	for name := range z.parts {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if ci, cj := names[i] == "[Content_Types].xml", names[j] == "[Content_Types].xml"; ci != cj {
			return ci
		}
		return names[i] < names[j]
	})
	zw := zip.NewWriter(z.w)
	// The fastest deflate level: sheet XML is repetitive enough that it
	// still shrinks about tenfold, at a fraction of the default's time.
	zw.RegisterCompressor(zip.Deflate, newDeflater)
	for _, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: zipTime})
		if err != nil {
			return err
		}
		if _, err := z.parts[name].WriteTo(w); err != nil {
			return err
		}
	}
	return zw.Close()
}

var _ excelize.ZipWriter = (*sortedZip)(nil)

// deflaters keeps compressors between parts and workbooks: each holds
// about a megabyte of tables, which allocating afresh for every part of
// every workbook cost more than compressing a small part.
var deflaters sync.Pool

// pooledDeflater returns its compressor to the pool when closed.
type pooledDeflater struct{ *flate.Writer }

func (d pooledDeflater) Close() error {
	err := d.Writer.Close()
	deflaters.Put(d.Writer)
	return err
}

func newDeflater(w io.Writer) (io.WriteCloser, error) {
	if fw, ok := deflaters.Get().(*flate.Writer); ok {
		fw.Reset(w)
		return pooledDeflater{fw}, nil
	}
	fw, err := flate.NewWriter(w, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	return pooledDeflater{fw}, nil
}
