package scenarios

import (
	"bytes"
	"slices"
	"testing"
)

// Every mapping of this file is written out of name order, with two entries at least.
const unorderedFile = `name: t
tools:
  zeta: {timeout: 1s, arguments: {zz: 1, aa: 2}}
  alpha: {timeout: 1s, arguments: {yy: 1, bb: 2}}
workload:
  workers: 10
  zones: {zb: 0.5, za: 0.5}
  tools: {zeta: 1, alpha: 2}
  model: m1
recovery:
  humans: {reviewers: 2, review_time: {default: 1m, transient: 2m, invalid_output: 3m}, approve: {default: 0.5, transient: 0.9}}
expect: {terminated_rate: "<= 0.5", completion_rate: ">= 0.1"}
tolerances: {terminated_rate: 0.1, completion_rate: 0.2}
prices:
  currency: USD
  models: {m1: {input: 1, output: 2}}
  tools: {zeta: {call: 1}, alpha: {call: 2}}
`

// Parse returns a canonical scenario, every mapping in name order; Canonical returns it
// as is. A Go-built scenario with any one of them out of order gets a sorted copy equal to
// the parsed one, and is itself left as it was.
func TestCanonicalSortsEveryMapping(t *testing.T) {
	s, err := Parse("t.yaml", []byte(unorderedFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Canonical() != s {
		t.Fatalf("Canonical of a parsed scenario is a copy; want the scenario itself")
	}
	want := s.JSON()
	for name, unsort := range map[string]func(c *Scenario){
		"tools": func(c *Scenario) { c.Tools = reversed(c.Tools) },
		"arguments": func(c *Scenario) {
			c.Tools = slices.Clone(c.Tools)
			c.Tools[1].Arguments = reversed(c.Tools[1].Arguments)
		},
		"mix":          func(c *Scenario) { c.Workload.Mix = reversed(c.Workload.Mix) },
		"zones":        func(c *Scenario) { c.Workload.Zones = reversed(c.Workload.Zones) },
		"expect":       func(c *Scenario) { c.Expect = reversed(c.Expect) },
		"tolerances":   func(c *Scenario) { c.Tolerances = reversed(c.Tolerances) },
		"prices.tools": func(c *Scenario) { p := *c.Prices; p.Tools = reversed(p.Tools); c.Prices = &p },
		"prices.models": func(c *Scenario) {
			p := *c.Prices
			p.Models = append([]ModelPrice{{Model: "zz"}}, p.Models...)
			c.Prices = &p
		},
		"reviewers' cases": func(c *Scenario) { h := *c.Recovery.Humans; h.ByClass = reversed(h.ByClass); c.Recovery.Humans = &h },
	} {
		c := *s
		unsort(&c)
		before := c.JSON()
		got := c.Canonical()
		if got == &c {
			t.Errorf("%s out of order: Canonical returned the scenario itself; want a sorted copy", name)
			continue
		}
		if c.isCanonical() {
			t.Errorf("%s out of order: the test did not unsort it", name)
		}
		if !bytes.Equal(c.JSON(), before) {
			t.Errorf("%s out of order: Canonical changed the scenario it was given", name)
		}
		if !got.isCanonical() {
			t.Errorf("%s out of order: the copy is not canonical: %s", name, got.JSON())
		}
		if name == "prices.models" {
			continue // one model more than the file
		}
		if !bytes.Equal(got.JSON(), want) {
			t.Errorf("%s out of order: the copy\n%s\nwant the parsed scenario\n%s", name, got.JSON(), want)
		}
	}
}

func reversed[T any](s []T) []T {
	if len(s) < 2 {
		panic("reversed: fewer than two entries, nothing to unsort")
	}
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
