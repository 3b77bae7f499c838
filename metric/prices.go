package metric

// NeedsPrices reports whether the metric called name is money, or a share of money: it is
// undefined (n/a) in every run of a scenario without prices, so an expectation on it could
// never hold.
func NeedsPrices(name string) bool {
	return name == "cost_per_completion" || name == "wasted_cost_ratio"
}
