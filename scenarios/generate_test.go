package scenarios

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// keyPaths lists every fixed key of the tree under s as a dotted path, with [] for list
// items and * for free keys: the keys Generate must reach.
func keyPaths(s *schema, path string, out map[string]bool, depth int) {
	if s == nil || depth > 12 || s.noSet || s.noGen {
		return
	}
	if s == faultSchema {
		for _, k := range s.keys {
			out[join(path, k)] = true
		}
		return
	}
	for _, k := range s.keys {
		if distSchema.sub[k] != nil && (s.kind == kindDurDist || s.kind == kindCountDist) || s.sub[k].noSet || s.sub[k].noGen {
			continue // a family's parameters, drawn by family; the sweep grid, left to sweeps
		}
		out[join(path, k)] = true
		keyPaths(s.sub[k], join(path, k), out, depth+1)
	}
	if s.elem != nil {
		sep := "*"
		if s.seq {
			sep = "[]"
		}
		keyPaths(s.elem, join(path, sep), out, depth+1)
	}
}

// seenPaths adds the paths of the keys of a generated file, named as keyPaths names them.
func seenPaths(n *yaml.Node, sch *schema, path string, out map[string]bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if sch.sub[k] != nil {
				out[join(path, k)] = true
				seenPaths(v, sch.sub[k], join(path, k), out)
			} else if sch.elem != nil && !sch.seq {
				seenPaths(v, sch.elem, join(path, "*"), out)
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			seenPaths(c, sch.elem, join(path, "[]"), out)
		}
	}
}

// Every key of the key tree, including any added later, appears in generated files, and a
// fair share of them are valid scenarios.
func TestGenerateReachesEveryKey(t *testing.T) {
	want := map[string]bool{}
	keyPaths(rootSchema, "", want, 0)
	seen := map[string]bool{}
	why := map[string]int{}
	valid := 0
	const files = 1000
	r := rand.New(rand.NewPCG(1, 2))
	for range files {
		data := Generate(r.IntN)
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("Generate wrote a file YAML cannot read: %v\n%s", err, data)
		}
		seenPaths(doc.Content[0], rootSchema, "", seen)
		if _, err := Parse("gen.yaml", data, nil); err == nil {
			valid++
		} else if testing.Verbose() {
			for _, e := range err.(ErrorList) {
				why[e.Key+": "+e.Msg]++
			}
		}
	}
	var missing []string
	for p := range want {
		if !seen[p] {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("keys never generated in %d files: %s", files, strings.Join(missing, ", "))
	}
	// Each optional key is left out with probability 1/4 and the cross-key rules refuse
	// some files; a quarter valid is plenty for fuzzing, and far below what is measured.
	if valid < files/10 {
		t.Errorf("only %d of %d generated files are valid", valid, files)
	}
	t.Logf("%d of %d generated files valid, %d keys reached", valid, files, len(seen))
	for w, n := range why {
		if n > files/50 {
			t.Logf("%4d x %s", n, w)
		}
	}
}

// A probability that must be above 0 is drawn among the twentieths 0.05 to 1, each written
// exactly, so that generated files reach every one of them (0.15 and 0.95 too).
func TestGeneratedProbabilityAboveZero(t *testing.T) {
	for k := range 20 {
		g := &generator{choose: func(n int) int { return k % n }}
		v := g.value(&schema{kind: kindProb, above: true}, "p")
		want := float64(1+k) / 20
		if got, err := strconv.ParseFloat(v.Value, 64); err != nil || got != want || v.Tag != "!!float" {
			t.Errorf("draw %d: %s %q; want !!float %v", k, v.Tag, v.Value, want)
		}
	}
}

// A Pareto's alpha is drawn among 1.1 to 4.0 in steps of 0.1, each written exactly, so
// that generated files hold heavy tails with a finite mean, none at alpha 1 or below.
func TestGeneratedParetoAlpha(t *testing.T) {
	pareto := slices.IndexFunc(distFamilies, func(f distFamily) bool { return f.kind == DistPareto })
	for k := range 30 {
		g := &generator{choose: func(n int) int {
			switch n {
			case len(distFamilies):
				return pareto
			case 30:
				return k
			case 2, 3:
				return 1 // not a single value, no extra keys
			}
			return 0
		}}
		n := g.dist(ruleAt("workload.steps"), false)
		var alpha *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "alpha" {
				alpha = n.Content[i+1]
			}
		}
		want := 1.1 + float64(k)/10
		if alpha == nil {
			t.Fatalf("draw %d: no alpha in %+v", k, n.Content)
		}
		if got, err := strconv.ParseFloat(alpha.Value, 64); err != nil || got != want || !(got > 1) || alpha.Tag != "!!float" {
			t.Errorf("draw %d: alpha %s %q; want !!float %v", k, alpha.Tag, alpha.Value, want)
		}
	}
}

// Generated workload.zones split the workers in equal shares, written exactly, that sum to
// 1 as Validate requires, whichever of the three zones a file keeps.
func TestGeneratedZoneShares(t *testing.T) {
	for mask := 1; mask < 8; mask++ {
		calls := 0
		g := &generator{zones: []string{"za", "zb", "zc"}, choose: func(n int) int {
			if n != 2 {
				t.Fatalf("zones: choose(%d); want only the one-in-two draws of subset", n)
			}
			calls++
			return 1 - (mask>>(calls-1))&1 // 0 keeps the zone
		}}
		n := g.dict(workloadSchema.sub["zones"], "workload.zones")
		kept := len(n.Content) / 2
		want := 1 / float64(kept)
		sum := 0.0
		for i := 1; i < len(n.Content); i += 2 {
			share, err := strconv.ParseFloat(n.Content[i].Value, 64)
			if err != nil || share != want {
				t.Errorf("mask %03b: share %q of %s; want %v", mask, n.Content[i].Value, n.Content[i-1].Value, want)
			}
			sum += share
		}
		if math.Abs(sum-1) > zoneShareSlack {
			t.Errorf("mask %03b: the shares of %d zones sum to %v; want 1", mask, kept, sum)
		}
	}
}

// A drawn number is never below its key's minimum (-1 for a signed key), above it for a key
// that excludes it, and one draw in 32 is far above it, 1e6 over the minimum.
func TestGeneratedNumbers(t *testing.T) {
schemas:
	for _, s := range []*schema{{kind: kindNumber, min: 0.5}, {kind: kindNumber, min: 2, above: true}, {kind: kindNumber, signed: true}} {
		lo := s.min
		if s.signed {
			lo = -1
		}
		for k := range 1000 {
			for _, far := range []bool{false, true} {
				g := &generator{choose: func(n int) int {
					if n == 32 {
						if far {
							return 0
						}
						return 1
					}
					return k % n
				}}
				x, err := strconv.ParseFloat(g.number(s).Value, 64)
				switch {
				case err != nil:
					t.Fatalf("min %v, draw %d: %v", lo, k, err)
				case far && x != lo+1e6:
					t.Errorf("min %v, the far draw: %v; want %v", lo, x, lo+1e6)
					continue schemas
				case !far && (x < lo || s.above && x <= lo):
					t.Errorf("min %v (above %t), draw %d: %v; want at least the minimum", lo, s.above, k, x)
					continue schemas
				}
			}
		}
	}
}

// A probability is drawn among the twentieths 0 to 1, each written exactly.
func TestGeneratedProbability(t *testing.T) {
	for k := range 21 {
		g := &generator{choose: func(n int) int { return k % n }}
		v := g.prob()
		if got, err := strconv.ParseFloat(v.Value, 64); err != nil || got != float64(k)/20 || v.Tag != "!!float" {
			t.Errorf("draw %d: %s %q; want !!float %v", k, v.Tag, v.Value, float64(k)/20)
		}
	}
}
