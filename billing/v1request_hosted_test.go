package billing

import (
	"errors"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// A chat request that asks the backend to search the web is billed by the
// backend per search, beside the tokens the meter charges: the gateway
// would pay for searches no account is charged for.
func TestParseV1RefusesHostedSearch(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"news?"}],"web_search_options":{}}`,
		`{"model":"m","messages":[{"role":"user","content":"news?"}],"Web_Search_Options":{"search_context_size":"high"}}`,
	} {
		_, err := ParseV1([]byte(body))
		var ae *apierror.Error
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != "unsupported_parameter" {
			t.Errorf("%s: %v, want 400 unsupported_parameter", body, err)
		}
	}
	if _, err := ParseV1([]byte(`{"model":"m","messages":[],"web_search_options":null}`)); err != nil {
		t.Errorf("a null web_search_options: %v", err)
	}
}
