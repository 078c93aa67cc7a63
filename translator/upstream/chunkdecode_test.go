package upstream

import (
	"encoding/json"
	"reflect"
	"testing"
)

// chunkSamples are chunks as backends send them, and the odd ones the
// fast decoder must either decode as json.Unmarshal does or leave to it.
var chunkSamples = []string{
	// OpenAI, vLLM, llama.cpp, Ollama text deltas.
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"x","choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}`,
	`{"id":"x","choices":[{"index":0,"delta":{"reasoning":"think","content":null}}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46,"completion_tokens_details":{"reasoning_tokens":5}}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":null}}`,
	`{"choices":null,"usage":null,"error":null}`,
	`{"choices":[null]}`,
	`{"choices":[{"index":1,"delta":{"content":"second choice"}}]}`,
	// Escapes, Unicode and bytes json.Unmarshal replaces.
	`{"choices":[{"index":0,"delta":{"content":"line\nbreak \"quoted\" \u00e9\ud83d\ude00"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 naïve 日本"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff byte\"}}]}",
	// What the fast decoder leaves to json.Unmarshal.
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"web_search","arguments":"{\"q\":"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{}"}}}]}`,
	`{"choices":[{"index":0,"message":{"content":"whole"},"finish_reason":"stop"}]}`,
	`{"error":{"message":"overloaded"}}`,
	`{"object":"error","message":"The engine loop has stopped.","type":"InternalServerError","param":null,"code":500}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"prompt_tokens":3,"completion_tokens":4}}}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"timings":{"prompt_n":3,"predicted_n":4}}`,
	`{"object":null,"message":{"role":"x"},"choices":[{"index":0,"delta":{"content":"a"}}]}`,
	`{"Choices":[{"index":0,"delta":{"content":"case"}}]}`,
	`{"choices":[{"INDEX":0,"delta":{"Content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"ch\u006fices":[{"index":0,"delta":{"content":"escaped key"}}]}`,
	`{"choices":[{"index":1.0,"delta":{"content":"float index"}}]}`,
	`{"choices":[{"index":99999999999999999999,"delta":{}}]}`,
	`{"choices":[{"index":0,"delta":{"content":5}}]}`,
	`{"choices":{"index":0}}`,
	`{"usage":{"prompt_tokens":"12"}}`,
	`{"usage":[]}`,
	`null`,
	`[]`,
}

// TestDecodeChunkAgreesWithUnmarshal: wherever the fast decoder answers,
// it answers as json.Unmarshal; and it does answer for the common chunks.
func TestDecodeChunkAgreesWithUnmarshal(t *testing.T) {
	fast := 0
	for _, s := range chunkSamples {
		if checkDecodeChunk(t, []byte(s)) {
			fast++
		}
	}
	// The first thirteen samples are the shapes it exists for.
	if fast < 13 {
		t.Errorf("the fast decoder took %d of the samples, want at least the 13 common shapes", fast)
	}
}

// checkDecodeChunk fails t if decodeChunk decodes data other than
// json.Unmarshal does, and reports whether it decoded it.
func checkDecodeChunk(t *testing.T, data []byte) bool {
	t.Helper()
	var want wireChunk
	wantErr := json.Unmarshal(data, &want)
	var got wireChunk
	if !decodeChunk(data, &got) {
		return false
	}
	if !json.Valid(data) {
		t.Errorf("%s: decoded, but it is not valid JSON", data)
		return true
	}
	if wantErr != nil {
		t.Errorf("%s: decoded, but json.Unmarshal refuses it: %v", data, wantErr)
		return true
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\ndecoded    %s\nUnmarshal: %s", data, g, w)
	}
	return true
}

func FuzzDecodeChunk(f *testing.F) {
	for _, s := range chunkSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeChunk(t, data)
	})
}

// BenchmarkDecodeChunk decodes a text delta as every stream chunk is.
func BenchmarkDecodeChunk(b *testing.B) {
	data := []byte(chunkSamples[1])
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			if !decodeChunk(data, &c) {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c wireChunk
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
