package hunt

import (
	"fmt"
	"math"

	"github.com/mayday-sim/mayday/scenarios"
)

// Coverage says how much of the envelope the search's trials drew: each entry's trials and,
// for each of its ranges, how many of its tenths a drawn value fell in.
type Coverage struct {
	Trials  int             `json:"trials"`
	Entries []EntryCoverage `json:"entries"`
	Share   float64         `json:"share"` // tenths of every range drawn / all tenths (an entry without ranges: drawn or not)
	Text    string          `json:"text"`
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
		if !t.Ran {
			continue
		}
		c.Trials++
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
	return c
}
