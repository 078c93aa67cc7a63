//go:build ignore

// gen_mono writes Go-Mono.ttf.zlib and Go-Mono-Bold.ttf.zlib, the two
// faces the package compiles in compressed, from
// golang.org/x/image/font/gofont. Run it with go generate after changing
// golang.org/x/image's version; TestFacesMatchGofont checks that the
// copies agree.
package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"log"
	"os"

	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
)

func main() {
	for name, ttf := range map[string][]byte{
		"Go-Mono.ttf.zlib":      gomono.TTF,
		"Go-Mono-Bold.ttf.zlib": gomonobold.TTF,
	} {
		var out bytes.Buffer
		zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
		if err != nil {
			log.Fatal(err)
		}
		zw.Write(ttf)
		if err := zw.Close(); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d bytes from %d\n", name, out.Len(), len(ttf))
	}
}
