package request

// Error codes of request validation beyond the ones apierror names.
// docs/api.md lists each with its status and meaning.
const (
	CodeRequestTooLarge      = "request_too_large"       // 413
	CodeInvalidJSON          = "invalid_json"            // 400
	CodeInvalidType          = "invalid_type"            // 400
	CodeMissingParameter     = "missing_parameter"       // 400
	CodeInvalidParameter     = "invalid_parameter"       // 400
	CodeUnsupportedParameter = "unsupported_parameter"   // 400
	CodeInvalidMessages      = "invalid_messages"        // 400
	CodeInvalidRole          = "invalid_role"            // 400
	CodeInvalidContent       = "invalid_content"         // 400
	CodeInvalidModalities    = "invalid_modalities"      // 400, spec 7
	CodeUnsupportedURLScheme = "unsupported_url_scheme"  // 400, spec 7
	CodeInvalidImage         = "invalid_image"           // 400
	CodeImageTooLarge        = "image_too_large"         // 400
	CodeSystemMessageTooLong = "system_message_too_long" // 400, Revision B
	CodeInvalidObjects       = "invalid_objects"         // 400
	CodeInvalidHeaderValue   = "invalid_header_value"    // 400
	CodeInvalidTimezone      = "invalid_timezone"        // 400
)
