//go:build ignore

// gen_vocabulary writes o200k_base.vocab.zst, the vocabulary the
// tokenizer compiles in, from the copy of o200k_base that
// github.com/pkoukk/tiktoken-go-loader ships (OpenAI's published file).
// Run it with go generate after changing that module's version;
// TestVocabularyMatchesLoader checks that the two agree.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/klauspost/compress/zstd"
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
	var raw bytes.Buffer
	for _, tok := range tokens {
		raw.WriteByte(byte(len(tok)))
		raw.WriteString(tok)
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		log.Fatal(err)
	}
	out := zw.EncodeAll(raw.Bytes(), nil)
	if err := os.WriteFile("o200k_base.vocab.zst", out, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("o200k_base.vocab.zst: %d tokens, %d bytes\n", len(tokens), len(out))
}
