// Package fit turns what a run shows into a scenario that reproduces it, and sets a
// scenario's simulated runs beside the run they were fitted to.
//
// It is pure: it reads plain observations (Observed, filled by package analysis from a
// run's trace tables, imported or simulated alike) and returns values and YAML text. It
// neither reads databases nor simulates. Every distribution, optimiser and quantile comes
// from gonum (stat, stat/distuv, optimize).
//
// Fit chooses, per quantity, among the distribution families a scenario file supports
// (constant, exponential, uniform, lognormal, pareto) by the Akaike information criterion
// AIC = 2k − 2 ln L, the maximised log-likelihood of k parameters, and reports the
// one-sample Kolmogorov–Smirnov distance of the chosen fit. Proportions carry Wilson score
// intervals, rates exact Poisson (chi-square) intervals. Compare (calibrate) judges each
// metric of the simulated runs against the observed one within a documented tolerance.
package fit
