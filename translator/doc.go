// Package translator turns a plain OpenAI-compatible upstream, which only
// knows chat completions with tool calls, into the /v3 assistant of the
// Assistant Chat API 3.3: it validates requests, builds the upstream
// conversation, runs the tool loop, and writes the enriched event stream
// or the JSON answer.
//
// It does not import Caddy. A thin HTTP handler decodes the request with
// ReadRequest and hands it to Orchestrator.Serve; storage is plugged in
// through small interfaces (FileOpener, UsageRecorder, storage.Memory,
// storage.ObjectIDs).
package translator
