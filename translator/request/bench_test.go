package request

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
)

// benchBodies are request bodies shaped like real traffic: what decides
// how the body is decoded.
func benchBodies() []struct {
	name string
	body []byte
} {
	sentence := "The quarterly figures show revenue up 4.2% against plan, with costs flat; the \"north\" region leads. "

	short := `{"model":"svc-3","stream":true,"stream_options":{"include_usage":true},"messages":[` +
		`{"role":"system","content":"You are a concise assistant for the finance team."},` +
		`{"role":"user","content":"Summarise last quarter in three bullet points."},` +
		`{"role":"assistant","content":"Revenue rose, costs held, and the north region led."}]}`

	var long strings.Builder
	long.WriteString(`{"model":"svc-3","stream":true,"temperature":0.3,"messages":[{"role":"system","content":"You are a helpful assistant."}`)
	for i := 1; i < 200; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		text := strings.Repeat(sentence, 3)[:290]
		if i%10 == 0 {
			fmt.Fprintf(&long, `,{"role":%q,"content":[{"type":"text","text":%s},{"type":"input_file","file_id":"file-%d"}]}`, role, jsonString(text), i)
			continue
		}
		fmt.Fprintf(&long, `,{"role":%q,"content":%s}`, role, jsonString(text))
	}
	long.WriteString(`]}`)

	// Random bytes behind a PNG signature: base64 of them has no long
	// runs that would flatter any scanner.
	rng := rand.New(rand.NewPCG(1, 2))
	var images strings.Builder
	images.WriteString(`{"model":"svc-3","messages":[{"role":"user","content":[{"type":"text","text":"Compare these three charts."}`)
	for range 3 {
		img := make([]byte, 1<<20)
		for i := range img {
			img[i] = byte(rng.Uint32())
		}
		copy(img, pngBytes)
		fmt.Fprintf(&images, `,{"type":"image_url","image_url":{"url":%q,"detail":"auto"}}`, dataURL("image/png", img))
	}
	images.WriteString(`]}]}`)

	var objects strings.Builder
	objects.WriteString(`{"model":"svc-3","objects":{`)
	source := strings.Repeat("| Region | Revenue |\n| North | 4.2 |\n"+sentence+"\n", 40)[:5000]
	for i := 1; i <= 50; i++ {
		if i > 1 {
			objects.WriteByte(',')
		}
		fmt.Fprintf(&objects, `"obj%d":{"kind":"document","title":"Report %d","source":%s}`, i, i, jsonString(source))
	}
	objects.WriteString(`},"messages":[{"role":"user","content":"Add a chart to obj3."}]}`)

	return []struct {
		name string
		body []byte
	}{
		{"short chat", []byte(short)},
		{"long conversation", []byte(long.String())},
		{"three 1 MB images", []byte(images.String())},
		{"50 objects", []byte(objects.String())},
	}
}

func BenchmarkParse(b *testing.B) {
	lim := Limits{Profile: policy.ProfileFor(policy.RevisionA)}
	h := http.Header{}
	for _, bb := range benchBodies() {
		b.Run(bb.name, func(b *testing.B) {
			if _, err := Parse(bb.body, h, lim); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bb.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bb.body, h, lim); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
