//go:build ignore

// gen_faces writes faces/*.ttf.zlib, the Go fonts the package compiles
// in, from golang.org/x/image/font/gofont, zlib-compressed: the
// packages there hold each face uncompressed. Run it with go generate
// after changing golang.org/x/image's version; TestFacesMatchGofont
// checks that the two agree.
package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/goregular"
)

func main() {
	faces := []struct {
		file string
		ttf  []byte
	}{
		{"Go-Regular.ttf", goregular.TTF},
		{"Go-Bold.ttf", gobold.TTF},
		{"Go-Italic.ttf", goitalic.TTF},
		{"Go-Bold-Italic.ttf", gobolditalic.TTF},
		{"Go-Mono.ttf", gomono.TTF},
		{"Go-Mono-Bold.ttf", gomonobold.TTF},
	}
	if err := os.MkdirAll("faces", 0o755); err != nil {
		log.Fatal(err)
	}
	for _, f := range faces {
		var out bytes.Buffer
		zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
		if err != nil {
			log.Fatal(err)
		}
		zw.Write(f.ttf)
		if err := zw.Close(); err != nil {
			log.Fatal(err)
		}
		name := filepath.Join("faces", f.file+".zlib")
		if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d bytes from %d\n", name, out.Len(), len(f.ttf))
	}
}
