package hunt

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/scenarios"
)

// Coverage says how much of the envelope the search's trials drew: each entry's trials and,
// for each of its ranges, how many of its tenths a drawn value fell in.
type Coverage struct {
	Trials  int             `json:"trials"`
	Entries []EntryCoverage `json:"entries"`
	Share   float64         `json:"share"` // tenths of every range drawn / all tenths (an entry without ranges: drawn or not)
	// Refused counts the search trials the scenario refused (not run, not in Trials);
	// NotMeasured, per metric of an expectation, the trials that ran but could not measure
	// it (no fault window for goodput): those trials say nothing of it, pass or fail.
	Refused     int            `json:"refused"`
	NotMeasured map[string]int `json:"not_measured,omitempty"`
	Text        string         `json:"text"`
}

// EntryCoverage is one entry's part of Coverage.
type EntryCoverage struct {
	Kind   string          `json:"kind"`
	Trials int             `json:"trials"` // trials that drew it
	Ranges []RangeCoverage `json:"ranges,omitempty"`
}

// RangeCoverage is the tenths of one range a drawn value fell in.
type RangeCoverage struct {
	Key    string `json:"key"`
	Tenths int    `json:"tenths"` // of 10
}

func tenth(u float64) int { return min(int(math.Floor(u*10)), 9) }

// coverage measures the search trials (not the shrinking's) against the envelope.
func (s *search) coverage() Coverage {
	c := Coverage{Entries: make([]EntryCoverage, len(s.h.Faults))}
	hit := make([][]map[int]bool, len(s.h.Faults))
	for e := range s.h.Faults {
		f := &s.h.Faults[e]
		c.Entries[e].Kind = string(f.Kind)
		for _, p := range f.Params {
			if p.Kind != scenarios.TuneChoice {
				c.Entries[e].Ranges = append(c.Entries[e].Ranges, RangeCoverage{Key: p.Path})
			}
		}
		if f.Window() && f.Param("at") == nil {
			c.Entries[e].Ranges = append(c.Entries[e].Ranges, RangeCoverage{Key: "at"})
		}
		hit[e] = make([]map[int]bool, len(c.Entries[e].Ranges))
		for r := range hit[e] {
			hit[e][r] = map[int]bool{}
		}
	}
	for _, t := range s.res.Trials[:s.searched] {
		if t.Refused != "" {
			c.Refused++
		}
		if !t.Ran {
			continue
		}
		c.Trials++
		for _, m := range t.NotMeasured {
			if c.NotMeasured == nil {
				c.NotMeasured = map[string]int{}
			}
			c.NotMeasured[m]++
		}
		seen := map[int]bool{}
		for _, d := range t.state.draws {
			if !seen[d.entry] {
				seen[d.entry] = true
				c.Entries[d.entry].Trials++
			}
			r := 0
			for i, p := range s.h.Faults[d.entry].Params {
				if p.Kind != scenarios.TuneChoice {
					hit[d.entry][r][tenth(d.u[i])] = true
					r++
				}
			}
			if d.at != "" {
				hit[d.entry][r][tenth(d.atU)] = true
			}
		}
	}
	cells, got, kinds := 0, 0, 0
	for e := range c.Entries {
		if c.Entries[e].Trials > 0 {
			kinds++
		}
		if len(hit[e]) == 0 {
			cells++
			if c.Entries[e].Trials > 0 {
				got++
			}
		}
		for r := range hit[e] {
			c.Entries[e].Ranges[r].Tenths = len(hit[e][r])
			cells += 10
			got += len(hit[e][r])
		}
	}
	if cells > 0 {
		c.Share = float64(got) / float64(cells)
	}
	c.Text = fmt.Sprintf("%d trials drew %d of %d kinds of the envelope and %.0f%% of the tenths of its ranges", c.Trials, kinds, len(c.Entries), 100*c.Share)
	if c.Refused > 0 {
		c.Text += fmt.Sprintf("; %d trials were refused and did not run", c.Refused)
	}
	for _, m := range slices.Sorted(maps.Keys(c.NotMeasured)) {
		c.Text += fmt.Sprintf("; %s was not measured in %d of them (not a violation)", m, c.NotMeasured[m])
	}
	return c
}

// uncovered says why the search did not cover the envelope, "" when it did: a kind that
// no trial that ran drew, or more refused trials than trials that ran. The first refusal
// says why the scenario refused.
func (s *search) uncovered() string {
	c := s.res.Coverage
	var never []string
	for _, e := range c.Entries {
		if e.Trials == 0 {
			never = append(never, e.Kind)
		}
	}
	why := ""
	for _, t := range s.res.Trials[:s.searched] {
		if t.Refused != "" {
			why = fmt.Sprintf(" (the first refusal: %s)", t.Refused)
			break
		}
	}
	switch {
	case !s.res.Complete || s.searched == 0:
		return ""
	case c.Refused > c.Trials:
		return fmt.Sprintf("%d of %d trials were refused by the scenario and did not run%s", c.Refused, c.Refused+c.Trials, why)
	case len(never) > 0:
		return fmt.Sprintf("no trial that ran drew %s%s", strings.Join(never, ", "), why)
	}
	return ""
}
