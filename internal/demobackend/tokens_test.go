package demobackend

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "empty", in: "", want: nil},
		{name: "words and punctuation", in: "Hello, world!", want: []string{"Hello", ",", " world", "!"}},
		{name: "leading and trailing space", in: "  hi \n", want: []string{"  hi", " \n"}},
		{name: "json", in: `{"q":"a b"}`, want: []string{"{", `"`, "q", `"`, ":", `"`, "a", " b", `"`, "}"}},
		{name: "digits and marks", in: "café 42x", want: []string{"café", " 42x"}},
		{name: "cjk one per ideograph", in: "日本語 ok", want: []string{"日", "本", "語", " ok"}},
		{name: "long word split", in: strings.Repeat("a", 20), want: []string{strings.Repeat("a", 16), "aaaa"}},
		{name: "newlines", in: "a\n\nb", want: []string{"a", "\n\nb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tokens(tt.in)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if strings.Join(got, "") != tt.in {
				t.Fatalf("pieces do not rebuild the input: %q", got)
			}
			if n := CountTokens(tt.in); n != len(tt.want) {
				t.Fatalf("CountTokens = %d, want %d", n, len(tt.want))
			}
		})
	}
}

func FuzzTokensRebuildInput(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "日本語", " \t\n", "é\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Tokens(s)
		if strings.Join(got, "") != s {
			t.Fatalf("Tokens(%q) = %q", s, got)
		}
		if CountTokens(s) != len(got) {
			t.Fatalf("CountTokens(%q) = %d, len = %d", s, CountTokens(s), len(got))
		}
		for _, p := range got {
			if p == "" {
				t.Fatalf("empty piece in %q", got)
			}
		}
	})
}

func TestPromptTokens(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int
	}{
		{name: "one message", body: `{"model":"m","messages":[{"role":"user","content":"hi there"}]}`, want: 3 + 3 + 2},
		{name: "image part", body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:,"}}]}]}`, want: 3 + 3 + 1 + 85},
		{
			name: "tool offered costs its JSON",
			body: `{"model":"m","messages":[{"role":"user","content":"hi there"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
			want: 3 + 3 + 2 + CountTokens(`{"type":"function","function":{"name":"f"}}`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, e := decodeChatRequest([]byte(tt.body))
			if e != nil {
				t.Fatal(e)
			}
			if got := PromptTokens(req); got != tt.want {
				t.Fatalf("PromptTokens = %d, want %d", got, tt.want)
			}
		})
	}
}
