//go:build ignore

// gen_vocabulary writes o200k_base.vocab.zlib, the vocabulary the
// tokenizer compiles in, from the copy of o200k_base that
// github.com/pkoukk/tiktoken-go-loader ships (OpenAI's published file).
// Run it with go generate after changing that module's version;
// TestVocabularyMatchesLoader checks that the two agree.
package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"log"
	"os"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

func main() {
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe("o200k_base.tiktoken")
	if err != nil {
		log.Fatal(err)
	}
	tokens := make([]string, len(ranks))
	for tok, rank := range ranks {
		if rank < 0 || rank >= len(tokens) || tokens[rank] != "" {
			log.Fatalf("rank %d of %q is not one of 0 to %d, once each", rank, tok, len(tokens)-1)
		}
		if len(tok) == 0 || len(tok) > 255 {
			log.Fatalf("token of rank %d is %d bytes long: one length byte cannot say it", rank, len(tok))
		}
		tokens[rank] = tok
	}
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if err != nil {
		log.Fatal(err)
	}
	for _, tok := range tokens {
		zw.Write([]byte{byte(len(tok))})
		zw.Write([]byte(tok))
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("o200k_base.vocab.zlib", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("o200k_base.vocab.zlib: %d tokens, %d bytes\n", len(tokens), out.Len())
}
