//go:build duckdb_arrow

package analysis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrNoRun reports a run id that is not in the database.
var ErrNoRun = errors.New("analysis: no such run")

// metricsQuery reads the scalar columns of view (metrics, or the tests' second computation) in
// MetricNames order, then the currency of the run's prices (NULL when unpriced, or when the
// run's configuration is not JSON, which has no prices), and the termination reasons' names
// and counts.
func metricsQuery(view string) string {
	return "SELECT run_id, " + strings.Join(MetricNames, ", ") +
		", (SELECT CASE WHEN json_valid(r.config) THEN json_extract_string(r.config, '$.prices.currency') END" +
		" FROM runs r WHERE r.run_id = m.run_id)" +
		", map_keys(termination_reasons), map_values(termination_reasons)" +
		" FROM " + view + " m"
}

// Metrics returns the metrics row of one run.
func (db *DB) Metrics(ctx context.Context, runID string) (Metrics, error) {
	return db.runMetrics(ctx, "metrics", runID)
}

// RecomputeMetrics returns the metrics of one run computed again from its stored records
// (the same Go computation, replayed), rather than read from the row stored with it.
func (db *DB) RecomputeMetrics(ctx context.Context, runID string) (Metrics, error) {
	if err := db.waitViews(); err != nil {
		return Metrics{}, err
	}
	_, m, err := db.deriveRun(ctx, runID)
	if errors.Is(err, sql.ErrNoRows) {
		return Metrics{}, db.noRun(ctx, runID)
	}
	return m, err
}

func (db *DB) runMetrics(ctx context.Context, view, runID string) (Metrics, error) {
	all, err := db.queryMetrics(ctx, view, " WHERE run_id = ?", runID)
	if err != nil {
		return Metrics{}, err
	}
	if len(all) == 0 {
		return Metrics{}, db.noRun(ctx, runID)
	}
	return all[0], nil
}

// AllMetrics returns the metrics of every run in the database, ordered by run_id.
func (db *DB) AllMetrics(ctx context.Context) ([]Metrics, error) {
	return db.queryMetrics(ctx, "metrics", "")
}

func (db *DB) queryMetrics(parent context.Context, view, where string, args ...any) (_ []Metrics, err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	if !db.sandbox && view == "metrics" {
		if err := db.ready(ctx); err != nil {
			return nil, err
		}
	}
	rows, err := db.SQL().QueryContext(ctx, metricsQuery(view)+where+" ORDER BY run_id", args...)
	if err != nil {
		return nil, fmt.Errorf("analysis: reading the metrics view: %w", memoryHint(err))
	}
	defer rows.Close()
	var out []Metrics
	for rows.Next() {
		m, err := scanMetrics(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analysis: reading the metrics view: %w", memoryHint(err))
	}
	return out, nil
}

// scanMetrics reads one row of metricsQuery: NULL ratios become NaN.
func scanMetrics(rows *sql.Rows) (Metrics, error) {
	m := Metrics{TerminationReasons: map[string]int64{}}
	floats := make([]sql.NullFloat64, len(MetricNames))
	var currency sql.NullString
	var reasons, counts any
	dest := make([]any, 0, len(MetricNames)+4)
	dest = append(dest, &m.RunID)
	for i := range floats {
		dest = append(dest, &floats[i])
	}
	dest = append(dest, &currency, &reasons, &counts)
	if err := rows.Scan(dest...); err != nil {
		return m, fmt.Errorf("analysis: reading the metrics view: %w", err)
	}
	vals := make([]float64, len(MetricNames))
	for i := range floats {
		vals[i] = math.NaN()
		if floats[i].Valid {
			vals[i] = floats[i].Float64
		}
	}
	if err := metricValues(&m, vals); err != nil {
		return m, err
	}
	m.Currency = currency.String
	names, _ := reasons.([]any)
	ns, _ := counts.([]any)
	if len(names) != len(ns) {
		return m, fmt.Errorf("analysis: reading the metrics view: run %s: %d termination reasons, %d counts", m.RunID, len(names), len(ns))
	}
	for i, r := range names {
		reason, ok := r.(string)
		n, ok2 := ns[i].(int64)
		if !ok || !ok2 {
			return m, fmt.Errorf("analysis: reading the metrics view: run %s: termination reason %v = %v", m.RunID, r, ns[i])
		}
		m.TerminationReasons[reason] = n
	}
	return m, nil
}

func (db *DB) noRun(ctx context.Context, runID string) error {
	rows, err := db.SQL().QueryContext(ctx, "SELECT run_id FROM runs ORDER BY run_id LIMIT 21")
	if err != nil {
		return fmt.Errorf("%w: %q", ErrNoRun, runID)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0:
		return fmt.Errorf("%w: %q (the database holds no run)", ErrNoRun, runID)
	case len(ids) > 20:
		ids = append(ids[:20], "...")
	}
	return fmt.Errorf("%w: %q; runs in the database: %s", ErrNoRun, runID, strings.Join(ids, ", "))
}
