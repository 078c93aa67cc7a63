// Package testupstream is a scripted OpenAI-compatible chat backend. It
// stands in for vLLM, Ollama, llama.cpp server or OpenAI wherever
// Switchyard needs an upstream it can control: unit and end-to-end tests,
// benchmarks, and the `switchyard demo-backend` command.
//
// It serves GET /v1/models, GET /v1/models/{id} and
// POST /v1/chat/completions, both as one JSON answer and as a
// server-sent-event stream, with the field names, nulls, chunk order and
// error envelopes the real servers use, so that code which works against
// it works against them.
//
// Without a script every request gets a deterministic demo answer derived
// from the last message (see [DemoReply]). Tests script answers with
// [Server.Enqueue] (first in, first out) or [Server.Match] (every request a
// predicate accepts), and inspect what was sent with [Server.Requests]:
//
//	up := testupstream.Start(t, testupstream.Options{})
//	up.Enqueue(testupstream.ToolCalls(testupstream.ToolCall{Name: "web_search", Arguments: `{"query":"go"}`}))
//	up.Enqueue(testupstream.Text("Go is a programming language."))
//	// ... point the code under test at up.URL() ...
//	reqs := up.ChatRequests()
//
// [Server.Served] lists every completion it answered, with the usage it
// reported and how much of the answer went out before the answer ended or
// the client left: what a gateway billing per token owes a charge for.
//
// Token counts come from a small documented tokenizer ([Tokens]) rather
// than a real vocabulary: they are stable across runs and platforms, which
// is what billing tests need, and close enough in size for load tests.
package testupstream
