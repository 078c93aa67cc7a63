package billing

import "net/http"

// CheckRequestQuery refuses a query string on a request of a method with
// a body (CheckQuery), whatever stands in front of the handler that asks:
// the meter reads the body alone, and the upstream would read the query
// too. A bare "?" is not sent on.
func CheckRequestQuery(r *http.Request) error {
	m := MethodMeter(r.Method)
	if err := CheckQuery(m, r.Method, r.URL.Path, r.URL.RawQuery); err != nil {
		return err
	}
	if m != NoBody {
		r.URL.ForceQuery = false
	}
	return nil
}
