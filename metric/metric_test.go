package metric

import (
	"math"
	"slices"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    float64
		want string
	}{
		{"makespan", 63288.77, "17h34m48s"}, // 17·3600 + 34·60 + 48 = 63288, fraction dropped
		{"median_recovery_time", 1223.4, "20m23s"},
		{"p95_recovery_time", 4.25, "4.25s"},
		{"p95_recovery_time", 0.35, "350ms"},
		{"median_pending_time", 0, "0s"},
		{"goodput_recovery_time", -90, "-1m30s"}, // a difference in compare
		{"goodput_recovery_time", math.NaN(), "n/a"},
		{"completion_rate", 0.95, "0.9500"},
		{"completion_rate", 1, "1"},
		{"retry_amplification", 1.25, "1.2500"},
		{"events", 12345, "12345"},
		{"tokens_per_completion", 1234.5, "1234.5 tokens"},
		{"compute_per_completion", 12.5, "12.5000 cu·s"},
		{"backlog_growth", 3, "3/h"},
		{"cost_per_completion", 0.25, "0.2500"},
		{"terminated_policy_violation", 3, "3"},
		{"not_a_metric", 0.5, "0.5000"},
	} {
		if got := Format(tc.name, tc.v); got != tc.want {
			t.Errorf("Format(%s, %v) = %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
	if got := FormatMoney("cost_per_completion", 0.25, "EUR"); got != "0.2500 EUR" {
		t.Errorf("FormatMoney = %q, want 0.2500 EUR", got)
	}
	if got := FormatMoney("completion_rate", 0.5, "EUR"); got != "0.5000" {
		t.Errorf("FormatMoney of a ratio = %q, want no currency", got)
	}
}

func TestClamp(t *testing.T) {
	for _, tc := range []struct {
		metric         string
		lo, hi, wl, wh float64
	}{
		{"completion_rate", -0.1, 1.2, 0, 1},
		{"wasted_cost_ratio", -0.1, 0.5, 0, 0.5},
		{"correlated_failure_share", 0.2, 1.5, 0.2, 1},
		{"retry_amplification", 0.8, 1.4, 1, 1.4},
		{"makespan", -5, 50, 0, 50},
		{"tokens_per_completion", 10, 5000, 10, 5000},
		{"terminated_budget", -1, 3, 0, 3},
		{"unknown", -1, 3, 0, 3},
	} {
		lo, hi := Clamp(tc.metric, tc.lo, tc.hi)
		if lo != tc.wl || hi != tc.wh {
			t.Errorf("Clamp(%s, %v, %v) = %v, %v; want %v, %v", tc.metric, tc.lo, tc.hi, lo, hi, tc.wl, tc.wh)
		}
	}
	if lo, hi := Clamp("completion_rate", math.NaN(), math.NaN()); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("Clamp of an undefined interval = %v, %v; want NaN, NaN", lo, hi)
	}
}

func TestTable(t *testing.T) {
	compared := Compared()
	if want := len(All) - 3; len(compared) != want {
		t.Errorf("Compared has %d metrics, want %d (All without started, completed, terminated)", len(compared), want)
	}
	if slices.Contains(compared, "started") || !slices.Contains(compared, "makespan") {
		t.Errorf("Compared = %v", compared)
	}
	for i, m := range All {
		if m.Help == "" {
			t.Errorf("%s has no help", m.Name)
		}
		if !(m.Min < m.Max) {
			t.Errorf("%s: range [%v, %v] is empty", m.Name, m.Min, m.Max)
		}
		if m.Unit == Ratio && m.Max != 1 && m.Name != "" {
			t.Errorf("%s is a ratio with maximum %v, want 1", m.Name, m.Max)
		}
		if Index(m.Name) != i {
			t.Errorf("Index(%s) = %d, want %d", m.Name, Index(m.Name), i)
		}
	}
	if m, ok := Lookup("terminated_policy_violation"); !ok || m.Better != Lower || m.Unit != Count {
		t.Errorf("Lookup(terminated_policy_violation) = %+v, %v", m, ok)
	}
	for _, name := range []string{"terminated_", "nope"} {
		if Known(name) || Better(name) != Neither || Index(name) != -1 {
			t.Errorf("%q is taken for a metric", name)
		}
	}
	if !IsTime("makespan") || IsTime("completion_rate") || IsTime("nope") {
		t.Error("IsTime disagrees with the units")
	}
}

// Every metric with a direction has a rank for trade-off verdicts, none without one does, and
// a "never" companion is a metric of the table that is itself defined whenever there was
// something to recover from.
func TestRanksAndNeverCompanions(t *testing.T) {
	for _, m := range All {
		if (m.Better != Neither) != (m.Rank > 0) {
			t.Errorf("%s: direction %d but rank %d", m.Name, m.Better, m.Rank)
		}
		if m.Rank > 0 && RankName(m.Rank) == "" {
			t.Errorf("%s: rank %d has no name", m.Name, m.Rank)
		}
		if m.NeverUnless != "" {
			if c, ok := Lookup(m.NeverUnless); !ok || c.NeverUnless != "" {
				t.Errorf("%s: companion %q is not a plain metric of the table", m.Name, m.NeverUnless)
			}
		}
	}
	if got := Format("median_recovery_time", math.Inf(1)); got != "never" {
		t.Errorf("Format of a never recovery time = %q", got)
	}
}
