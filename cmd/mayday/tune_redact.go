//go:build duckdb_arrow

package main

import (
	"fmt"

	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
	"github.com/mayday-sim/mayday/tune"
)

// tuneRedactor redacts the values a search varies as sweep redacts its grid
// (traces.ParamRedactor): a value under a secret-looking key (tools.x.arguments.api_key)
// becomes its keyed hash, any other value is redacted as free text. What a search prints
// and stores (stdout, tune.json, report.md, tune.svg, recommended.set) shows values through
// it; only recommended.yaml and a planned round's sweep file, scenarios to run that hold
// what their source holds, keep them.
func tuneRedactor(base *scenarios.Scenario) func(path, value string) string {
	return traces.ParamRedactor(base)
}

// redactTuneFile returns a copy of f whose varied values (the choices of the tune block,
// each candidate's values and params, a planned round's points) are redacted.
func redactTuneFile(f *tuneFile, red func(path, value string) string) *tuneFile {
	out := *f
	out.Tune.Vary = make([]scenarios.TuneParam, len(f.Tune.Vary))
	for i, p := range f.Tune.Vary {
		if len(p.Choices) > 0 {
			choices := make([]string, len(p.Choices))
			for j, c := range p.Choices {
				choices[j] = red(p.Path, c)
			}
			p.Choices = choices
		}
		out.Tune.Vary[i] = p
	}
	values := func(vs []string) []string {
		r := make([]string, len(vs))
		for i, v := range vs {
			if i < len(f.Tune.Vary) {
				v = red(f.Tune.Vary[i].Path, v)
			}
			r[i] = v
		}
		return r
	}
	cand := func(tc tuneCandidate) tuneCandidate {
		if tc.Candidate != nil {
			c := *tc.Candidate
			c.Params = make(map[string]string, len(tc.Params))
			for k, v := range tc.Params {
				c.Params[k] = red(k, v)
			}
			c.Values = values(c.Values)
			tc.Candidate = &c
		}
		tc.Values = values(tc.Values)
		return tc
	}
	out.Candidates = make([]tuneCandidate, len(f.Candidates))
	for i, c := range f.Candidates {
		out.Candidates[i] = cand(c)
	}
	out.Front = make([]tuneCandidate, len(f.Front))
	for i, c := range f.Front {
		out.Front[i] = cand(c)
	}
	if len(f.Front) == 0 {
		out.Front = nil
	}
	if f.Recommend != nil {
		r := cand(*f.Recommend)
		out.Recommend = &r
	}
	if f.Round != nil {
		r := *f.Round
		r.Points = make([][]string, len(f.Round.Points))
		for i, p := range f.Round.Points {
			r.Points[i] = values(p)
		}
		out.Round = &r
	}
	return &out
}

// unredactValues gives back the values a tune.json stores redacted: a value redaction left
// alone stands for itself; a redacted one is the choice of its key that redacts to it. false
// when a value is none of these (the file does not describe this scenario's search).
func unredactValues(vary []scenarios.TuneParam, red func(path, value string) string, vals []string) ([]string, bool) {
	if len(vals) != len(vary) {
		return nil, false
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		p := vary[i]
		if !traces.Redacted(v) && red(p.Path, v) == v {
			out[i] = v
			continue
		}
		found := false
		for _, c := range p.Choices {
			if red(p.Path, c) == v {
				out[i], found = c, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

// unredactKnown turns the runs of a stored search into Known, by the candidates' own values.
func unredactKnown(in *tuneInputs, prev *tuneFile, red func(path, value string) string) error {
	in.known = map[string]map[uint64]map[string]float64{}
	for _, c := range prev.Candidates {
		vals, ok := unredactValues(in.t.Vary, red, c.Values)
		if !ok {
			return fmt.Errorf("candidate %d's values are not values of the scenario's tune block", candidateID(c))
		}
		k := tune.Key(vals)
		for _, r := range c.Runs {
			if in.known[k] == nil {
				in.known[k] = map[uint64]map[string]float64{}
			}
			in.known[k][r.Seed] = r.Metrics
		}
	}
	if prev.Round != nil {
		for i, p := range prev.Round.Points {
			vals, ok := unredactValues(in.t.Vary, red, p)
			if !ok {
				return fmt.Errorf("point %d of round %d is not a value of the scenario's tune block", i, prev.Round.Number)
			}
			prev.Round.Points[i] = vals
		}
	}
	return nil
}

func candidateID(c tuneCandidate) int {
	if c.Candidate == nil {
		return -1
	}
	return c.ID
}
