//go:build duckdb_arrow

package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Text output prints units: durations for seconds, the currency for money. The values are
// hand-picked: 63288.77 s is 17h34m48s (17·3600 + 34·60 + 48 = 63288, fraction dropped).
func TestSummaryTextUnits(t *testing.T) {
	s := Summary{Scenario: "fleet", Seed: 1, Status: "complete", Digest: "abc", Currency: "EUR",
		Metrics: map[string]float64{"makespan": 63288.77, "median_recovery_time": 1223.4,
			"completion_rate": 0.95, "cost_per_completion": 0.25, "tokens_per_completion": 1234.5}}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"makespan", "17h34m48s", "20m23s", "0.9500", "0.2500 EUR", "1234.5 tokens"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "63288") {
		t.Errorf("summary text prints raw seconds:\n%s", b.String())
	}
	// JSON keeps the raw numbers.
	var j bytes.Buffer
	if err := s.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Metrics  map[string]float64 `json:"metrics"`
		Currency string             `json:"currency"`
	}
	if err := json.Unmarshal(j.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Metrics["makespan"] != 63288.77 || back.Currency != "EUR" {
		t.Errorf("summary JSON: makespan %v, currency %q; want 63288.77, EUR", back.Metrics["makespan"], back.Currency)
	}
}

// check echoes an expectation as written (a duration stays a duration) in its text, and
// keeps the numeric form in JSON and JUnit names.
func TestCheckEchoesExpectation(t *testing.T) {
	e := expectation(t, "p95_recovery_time", "<= 30m")
	rs := CheckExpectations(Summary{Metrics: map[string]float64{"p95_recovery_time": 2442.87}}, nil)
	if len(rs) != 0 {
		t.Fatalf("no expectations gave %d results", len(rs))
	}
	r := ExpectationResult{Expectation: e, Value: 2442.87, N: 1, Lo: math.NaN(), Hi: math.NaN()}
	want := "p95_recovery_time <= 30m: measured 40m42s; one seed: rerun with --seeds 5 to tell a regression from noise"
	if got := r.Message(); got != want {
		t.Errorf("Message() = %q\nwant        %q", got, want)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"expect":"\u003c= 1800"`) || !strings.Contains(string(b), `"value":2442.87`) {
		t.Errorf("JSON changed its numeric form: %s", b)
	}
	if e.Canonical() != "p95_recovery_time <= 1800" {
		t.Errorf("Canonical() = %q", e.Canonical())
	}
}

// compare prints money with the currency only when both sides are in the same one.
func TestCompareCurrency(t *testing.T) {
	c := Comparison{A: Sample{Currency: "USD"}, B: Sample{Currency: "USD"}}
	if got := c.signed("cost_per_completion", 0.25); got != "+0.2500 USD" {
		t.Errorf("same currency: %q, want +0.2500 USD", got)
	}
	c.B.Currency = "EUR"
	if got := c.format("cost_per_completion", 0.25); got != "0.2500" {
		t.Errorf("two currencies: %q, want a bare number", got)
	}
	if got := c.format("makespan", 90); got != "1m30s" {
		t.Errorf("makespan: %q, want 1m30s", got)
	}
}
