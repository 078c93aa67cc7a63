package translator

// Error codes of the orchestrator beyond the ones apierror and request
// name. docs/api.md lists each with its status and meaning.
const (
	CodeFileNotFound      = "file_not_found"     // 404 (400 when attachments are off)
	CodeUpstreamError     = "upstream_error"     // 502
	CodeUpstreamTimeout   = "upstream_timeout"   // 504
	CodeStreamInterrupted = "stream_interrupted" // in-stream, spec 7
)
