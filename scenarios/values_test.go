package scenarios

import (
	"math"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"90s", 90 * time.Second},
		{"2h30m", 150 * time.Minute},
		{"3d", 72 * time.Hour},
		{"1.5d", 36 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"200ms", 200 * time.Millisecond},
		{"1.5h", 90 * time.Minute},
		{"10us", 10 * time.Microsecond},
		{"0.5s", 500 * time.Millisecond},
	}
	for _, c := range good {
		got, err := ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "5", "5 m", "m", "1x", "1.2.3s", "+5m", "1e3s", "d", "-", "1d-2h", "200000d"} {
		if got, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, got)
		}
	}
	if _, err := parseDuration("-5m"); err != errNegative {
		t.Errorf("-5m: %v, want errNegative", err)
	}
}

func TestParseRate(t *testing.T) {
	good := []struct {
		in   string
		want float64 // per second
	}{
		{"50/m", 50.0 / 60},
		{"100/h", 100.0 / 3600},
		{"1/24h", 1.0 / 86400},
		{"2/d", 2.0 / 86400},
		{"3/s", 3},
		{"0/h", 0},
		{"0.5/90s", 0.5 / 90},
		{"1 / 2h", 1.0 / 7200},
	}
	for _, c := range good {
		got, err := ParseRate(c.in)
		if err != nil || math.Abs(got.PerSecond-c.want) > 1e-15*c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v/s", c.in, got.PerSecond, err, c.want)
		}
	}
	for _, in := range []string{"50", "50/x", "/h", "50/", "-1/h", "1/0s", "1/-1h", "1e3/h", "inf/h", "NaN/h", "1/h/h", "0x10/h"} {
		if got, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %v, want an error", in, got)
		}
	}
}

func TestExpectations(t *testing.T) {
	cases := []struct {
		metric, text string
		holds        map[float64]bool
	}{
		{"completion_rate", ">= 0.95", map[float64]bool{0.95: true, 0.94: false, 1: true}},
		{"retry_amplification", "<=1.5", map[float64]bool{1.5: true, 1.51: false}},
		{"duplicate_side_effects", "== 0", map[float64]bool{0: true, 1: false}},
		{"events", "> 10", map[float64]bool{10: false, 11: true}},
		{"terminated_rate", "< 0.1", map[float64]bool{0.1: false, 0.05: true}},
		{"completion_rate", "between 0.5 and 0.9", map[float64]bool{0.5: true, 0.9: true, 0.49: false, 0.91: false}},
		{"p95_recovery_time", "<= 5m", map[float64]bool{300: true, 301: false}},
		{"completion_rate", ">= 0.5", map[float64]bool{math.NaN(): false}},
	}
	for _, c := range cases {
		e, msg := ParseExpectation(c.metric, c.text)
		if msg != "" {
			t.Errorf("%s %q: %s", c.metric, c.text, msg)
			continue
		}
		for x, want := range c.holds {
			if got := e.Holds(x); got != want {
				t.Errorf("%s %q: Holds(%v) = %v, want %v", c.metric, c.text, x, got, want)
			}
		}
	}
	// Durations are accepted for time metrics only; other malformed forms are refused.
	for _, c := range [][2]string{
		{"completion_rate", "<= 5m"}, {"completion_rate", "=> 1"}, {"completion_rate", ">= "},
		{"completion_rate", "between 1"}, {"completion_rate", "between a and b"},
		{"completion_rate", "0.9"}, {"completion_rate", ">= inf"}, {"completion_rate", "!= 1"},
	} {
		if _, msg := ParseExpectation(c[0], c[1]); msg == "" {
			t.Errorf("%s %q was accepted", c[0], c[1])
		}
	}
	if got := (Expectation{Metric: "makespan", Op: "between", Value: 1, Upper: 2}).String(); got != "makespan between 1 and 2" {
		t.Errorf("String() = %q", got)
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"investigations", "arrival", "steps", "think", "tokens"}
	for in, want := range map[string]string{
		"arival": "arrival", "step": "steps", "Tokens": "tokens", "colour": "", "x": "", "investigation": "investigations",
	} {
		if got := closest(in, keys); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}

// The longest duration is 2^63-1 ns, written whole or in parts; a nanosecond more is out
// of range.
func TestDurationAtItsLimit(t *testing.T) {
	for _, s := range []string{"9223372036854775807ns", "9223372036s854775807ns"} {
		if d, err := parseDuration(s); err != nil || d != math.MaxInt64 {
			t.Errorf("parseDuration(%q) = %d, %v; want %d", s, d, err, int64(math.MaxInt64))
		}
	}
	for _, s := range []string{"9223372036854775808ns", "9223372036s854775808ns"} {
		if _, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q): no error; want out of range", s)
		}
	}
}

// Days are parsed as hours times 24, so the largest number of days is the one whose hours
// are (2^63-1)/24 ns, rounded down: 106751.991167300646 days is 2^63-8 ns, and the next
// decimal that parses to more hours is out of range, as ParseDuration says.
func TestDaysAtTheirLimit(t *testing.T) {
	const most = "106751.991167300646d"
	if d, err := ParseDuration(most); err != nil || d != math.MaxInt64/24*24 {
		t.Errorf("ParseDuration(%q) = %d, %v; want %d", most, d, err, int64(math.MaxInt64/24*24))
	}
	const past = "106751.991167300647d"
	_, err := ParseDuration(past)
	if want := `scenarios: duration "` + past + `" is out of range (at most about 290 years)`; err == nil || err.Error() != want {
		t.Errorf("ParseDuration(%q): %v; want %s", past, err, want)
	}
}
