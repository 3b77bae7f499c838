//go:build duckdb_arrow

package analysis

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/sim"
	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

func runMetrics(t *testing.T, sc *scenarios.Scenario) Metrics {
	t.Helper()
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	if err != nil || len(res.Violations) > 0 {
		t.Fatalf("run: %v %v", err, res.Violations)
	}
	db := openTestDB(t)
	if err := LoadCollector(db, "money-s1", &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	m, err := db.Metrics(context.Background(), "money-s1")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCostPerCompletion checks the money metrics against the price table by hand: 50
// investigations of k = 6 steps, each step a model turn of T·g^s tokens (s = 0..5, truncated
// to whole tokens, ¾ input and ¼ output as the spans record them) and one call to a tool that
// serves for 2 s at 3 compute units per second. One investigation costs
// Σ_s [(n_s − ⌊n_s/4⌋)·in + ⌊n_s/4⌋·out]/1000 + k·call + k·2·3·compute_second. Nothing fails,
// so nothing is wasted. Context growth g = 1.25 raises the cost as the table predicts.
func TestCostPerCompletion(t *testing.T) {
	const k, tokens, in, out, call, cs = 6, 1000.0, 0.003, 0.015, 0.01, 0.0005
	want := func(g float64) float64 {
		c := 0.0
		for s := 0; s < k; s++ {
			n := int64(tokens * math.Pow(g, float64(s)))
			c += (float64(n-n/4)*in + float64(n/4)*out) / 1000
		}
		return c + k*call + k*2*3*cs
	}
	for _, g := range []float64{1, 1.25} {
		sc, err := scenarios.Parse("money.yaml", []byte(`
name: money
workload:
  investigations: 50
  steps: 6
  tokens: {dist: constant, value: 1000, growth: `+fmtG(g)+`}
  model: m
tools: {svc: {latency: 2s, compute: 3}}
prices:
  currency: EUR
  models: {m: {input: 0.003, output: 0.015}}
  tools: {svc: {call: 0.01, compute_second: 0.0005}}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		m := runMetrics(t, sc)
		if w := want(g); math.Abs(m.Get("cost_per_completion")-w) > 1e-9*w || m.Get("wasted_cost_ratio") != 0 {
			t.Errorf("growth %v: cost_per_completion %.9f, wasted_cost_ratio %v; want %.9f and 0", g, m.Get("cost_per_completion"), m.Get("wasted_cost_ratio"), w)
		}
		t.Logf("growth %v: cost_per_completion %.6f EUR (closed form %.6f)", g, m.Get("cost_per_completion"), want(g))
		if m.Currency != "EUR" {
			t.Errorf("growth %v: currency %q, want EUR from prices.currency", g, m.Currency)
		}
	}
	// Unpriced: undefined, not 0.
	sc, _ := scenarios.Parse("free.yaml", []byte("name: free\ntools: {svc: {}}\n"), nil)
	if m := runMetrics(t, sc); !math.IsNaN(m.Get("cost_per_completion")) || !math.IsNaN(m.Get("wasted_cost_ratio")) {
		t.Errorf("unpriced run: cost_per_completion %v, wasted_cost_ratio %v; want NULL", m.Get("cost_per_completion"), m.Get("wasted_cost_ratio"))
	} else if m.Currency != "" {
		t.Errorf("unpriced run: currency %q, want none", m.Currency)
	}
}

func fmtG(g float64) string { return strconv.FormatFloat(g, 'g', -1, 64) }

// TestPricesSurviveRedaction: prices are configuration, not secrets. A priced scenario whose
// tool has a secret argument keeps its prices in runs.config (the cost metrics are computed
// from them) while the secret is redacted.
func TestPricesSurviveRedaction(t *testing.T) {
	sc, err := scenarios.Parse("priced.yaml", []byte(`
name: priced
workload: {investigations: 5, tokens: 1000, model: m}
tools: {svc: {latency: 1s, arguments: {api_key: `+tracetest.Canary+`}}}
prices: {models: {m: {input: 0.003, output: 0.015}}, tools: {svc: {call: 0.01}}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var c record.Collector
	res, err := sim.Run(context.Background(), sc, 1, &c, sim.Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	if err := LoadCollector(db, "priced-s1", &c, traces.Run{Scenario: sc.Name, Seed: 1, Config: string(sc.JSON()),
		ConfigHash: sc.Hash(), Events: res.Events, Status: traces.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	var cfg string
	if err := db.SQL().QueryRow(`SELECT config FROM runs`).Scan(&cfg); err != nil {
		t.Fatal(err)
	}
	m, err := db.Metrics(context.Background(), "priced-s1")
	if err != nil {
		t.Fatal(err)
	}
	// 750 input and 250 output tokens, one call: 0.00225 + 0.00375 + 0.01.
	if strings.Contains(cfg, tracetest.Canary) || !strings.Contains(cfg, `"prices"`) || math.Abs(m.Get("cost_per_completion")-0.016) > 1e-12 {
		t.Errorf("config %s; cost_per_completion %v, want the secret redacted, the prices kept and 0.016", cfg, m.Get("cost_per_completion"))
	}
}
