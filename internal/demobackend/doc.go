// Package demobackend is a deterministic OpenAI-compatible chat backend:
// the `switchyard demo-backend` command, which lets the gateway be tried
// and benchmarked without a model server (docs/demo-backend.md), and the
// backend the tests script (internal/testupstream builds on it).
//
// It serves GET /v1/models, GET /v1/models/{id} and
// POST /v1/chat/completions, both as one JSON answer and as a
// server-sent-event stream, with the field names, nulls, chunk order and
// error envelopes the real servers use, so that code which works against
// it works against vLLM, Ollama, llama.cpp server or OpenAI.
//
// Every request gets a deterministic demo answer derived from the last
// message (see [DemoReply]); a message that asks for a chart, a diagram,
// a document, a search or the reading of a link gets a call of the
// matching tool when the request offers it. [Options.Answer] replaces
// the demo answer with any [Reply], failures included, and
// [Options.Observe] sees every request as it arrives.
//
// Token counts come from a small documented tokenizer ([Tokens]) rather
// than a real vocabulary: they are stable across runs and platforms, which
// is what billing tests need, and close enough in size for load tests.
package demobackend
