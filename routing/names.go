package routing

import "github.com/switchyardhq/switchyard/policy"

// ModelNames are the names a config serves, for the metrics' labels: the
// models' names, the single upstream's model and the models with a price.
func ModelNames(models []*Model, upstreamModel string, prices map[string]policy.ModelPrice) []string {
	names := make([]string, 0, len(models)+1+len(prices))
	for _, m := range models {
		names = append(names, m.Name)
	}
	names = append(names, upstreamModel)
	for name := range prices {
		names = append(names, name)
	}
	return names
}
