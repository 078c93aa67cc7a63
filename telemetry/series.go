package telemetry

import "github.com/prometheus/client_golang/prometheus"

// route numbers the values of the route label, so that the series of a
// route are found by index.
type route uint8

const (
	routeV1 route = iota
	routeV3Chat
	routeV3Files
	routeOther
	routeCount
)

// routeLabels are the route label's values, by number.
var routeLabels = [routeCount]string{RouteV1, RouteV3Chat, RouteV3Files, RouteOther}

// routeNumbered is the number of the route label's value name; false for
// a name that is none of them.
func routeNumbered(name string) (route, bool) {
	for i, l := range routeLabels {
		if l == name {
			return route(i), true
		}
	}
	return 0, false
}

// decision numbers the values of the decision label.
type decision uint8

const (
	admitted decision = iota
	rateLimited
	streamLimited
	balanceShort
	unavailable
	decisionCount
)

// decisionLabels are the decision label's values, by number.
var decisionLabels = [decisionCount]string{decisionAdmitted, decisionRateLimited, decisionStreamLimited, decisionBalance, decisionUnavailable}

// series are the series a request's and a charge's observations go to,
// kept once looked up in the vectors of one Metrics (Register makes a
// new set for the vectors it registers): by number where the label
// values are known in advance, else by the few values a label takes.
// No observation hashes its labels into the vector's map or takes its
// lock, and none but the first of a series looks it up at all.
type series struct {
	admissions [decisionCount]lazy[prometheus.Counter]
	routes     [routeCount]routeSeries
}

// routeSeries are the series of one route.
type routeSeries struct {
	promptTokens, completionTokens lazy[prometheus.Counter]
	cents, chargeErrors            lazy[prometheus.Counter]
	streams                        lazy[prometheus.Gauge]
	// requests are switchyard_requests_total's series by status and
	// code.
	requests children[statusCode, prometheus.Counter]
}

type statusCode struct {
	status int
	code   string
}

// modelSeries are the request histograms' series of one value of the
// model label, by route.
type modelSeries struct {
	label     string
	duration  [routeCount]lazy[prometheus.Observer]
	firstByte [routeCount]lazy[prometheus.Observer]
}

// modelTable are the series of the model label's values a config
// allows (ForConfig): the models it names, other and none.
type modelTable struct {
	named       map[string]*modelSeries
	other, none *modelSeries
}

func newModelTable(names []string) *modelTable {
	t := &modelTable{
		named: make(map[string]*modelSeries, len(names)),
		other: &modelSeries{label: modelOther},
		none:  &modelSeries{label: modelNone},
	}
	for _, name := range names {
		if name != "" {
			t.named[name] = &modelSeries{label: name}
		}
	}
	return t
}

// fresh is a table of the same models whose series are still to be
// looked up: for other vectors.
func (t *modelTable) fresh() *modelTable {
	if t == nil {
		return nil
	}
	out := newModelTable(nil)
	for name := range t.named {
		out.named[name] = &modelSeries{label: name}
	}
	return out
}

// of is the series of a request for model, bounded to the names the
// config knows.
func (t *modelTable) of(model string) *modelSeries {
	if model == "" {
		return t.none
	}
	if s, ok := t.named[model]; ok {
		return s
	}
	return t.other
}
