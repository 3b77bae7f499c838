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

// metricsQuery reads the metrics view's scalar columns in MetricNames order, then the
// currency of the run's prices (NULL when unpriced, or when the run's configuration is not
// JSON, which has no prices); the termination reasons come from the termination_reasons
// view (the view's MAP column holds the same counts for SQL users).
var metricsQuery = "SELECT run_id, " + strings.Join(MetricNames, ", ") +
	", (SELECT CASE WHEN json_valid(r.config) THEN json_extract_string(r.config, '$.prices.currency') END" +
	" FROM runs r WHERE r.run_id = metrics.run_id)" +
	" FROM metrics"

// Metrics returns the metrics row of one run.
func (db *DB) Metrics(ctx context.Context, runID string) (Metrics, error) {
	all, err := db.queryMetrics(ctx, " WHERE run_id = ?", runID)
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
	return db.queryMetrics(ctx, "")
}

func (db *DB) queryMetrics(parent context.Context, where string, args ...any) (_ []Metrics, err error) {
	ctx, cancel := db.limit(parent)
	defer cancel()
	defer func() { err = db.limitErr(parent, ctx, err) }()
	rows, err := db.SQL().QueryContext(ctx, metricsQuery+where+" ORDER BY run_id", args...)
	if err != nil {
		return nil, fmt.Errorf("analysis: reading the metrics view: %w", memoryHint(err))
	}
	defer rows.Close()
	var out []Metrics
	byRun := map[string]int{}
	for rows.Next() {
		m, err := scanMetrics(rows)
		if err != nil {
			return nil, err
		}
		byRun[m.RunID] = len(out)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analysis: reading the metrics view: %w", memoryHint(err))
	}
	if len(out) == 0 {
		return out, nil
	}
	reasons, err := db.SQL().QueryContext(ctx, "SELECT run_id, reason, investigations FROM termination_reasons"+where, args...)
	if err != nil {
		return nil, fmt.Errorf("analysis: reading the termination_reasons view: %w", err)
	}
	defer reasons.Close()
	for reasons.Next() {
		var run, reason string
		var n int64
		if err := reasons.Scan(&run, &reason, &n); err != nil {
			return nil, fmt.Errorf("analysis: reading the termination_reasons view: %w", err)
		}
		if i, ok := byRun[run]; ok {
			out[i].TerminationReasons[reason] = n
		}
	}
	if err := reasons.Err(); err != nil {
		return nil, fmt.Errorf("analysis: reading the termination_reasons view: %w", err)
	}
	return out, nil
}

// scanMetrics reads one row of metricsQuery: NULL ratios become NaN.
func scanMetrics(rows *sql.Rows) (Metrics, error) {
	m := Metrics{TerminationReasons: map[string]int64{}}
	floats := make([]sql.NullFloat64, len(MetricNames))
	var currency sql.NullString
	dest := make([]any, 0, len(MetricNames)+2)
	dest = append(dest, &m.RunID)
	for i := range floats {
		dest = append(dest, &floats[i])
	}
	dest = append(dest, &currency)
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
