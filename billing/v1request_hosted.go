package billing

import "strings"

// refuseHostedSearch refuses a /v1 chat body that asks the backend to
// search the web (web_search_options, OpenAI's search models): the
// backend bills each search beside the tokens, and the meter, which
// charges tokens, would leave the searches to the operator.
func refuseHostedSearch(fields fieldList) error {
	for _, f := range fields {
		if strings.EqualFold(f.name, "web_search_options") && !isNull(f.value) {
			return unsupportedParam("web_search_options is not supported: the backend bills web searches beside the tokens, " +
				"which the gateway cannot meter. The /v3 assistant searches the web itself.")
		}
	}
	return nil
}
