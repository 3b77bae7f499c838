//go:build duckdb_arrow

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mayday-sim/mayday/analysis"
	"github.com/mayday-sim/mayday/pipeline"
	"github.com/mayday-sim/mayday/reports"
	"github.com/mayday-sim/mayday/scenarios"
)

func newProvenance(base *scenarios.Scenario, sets []string, axes []scenarios.SweepAxis, points int, seed0 uint64, seeds int, shard pipeline.Shard) *reports.SweepProvenance {
	p := &reports.SweepProvenance{
		Scenario: base.Name, ScenarioHash: base.Hash(), OverridePaths: []string{},
		OverridesHash: hashStrings(sets), GridPoints: points, FirstSeed: seed0, Seeds: seeds,
		Version: version, Shard: shard.String(),
	}
	var flat []string
	for _, o := range sets {
		path, _, _ := strings.Cut(o, "=")
		p.OverridePaths = append(p.OverridePaths, strings.TrimSpace(path))
	}
	for _, a := range axes {
		p.Grid = append(p.Grid, reports.GridAxis{Path: a.Path, Values: len(a.Values)})
		flat = append(flat, "axis "+a.Path)
		flat = append(flat, a.Values...)
	}
	p.GridHash = hashStrings(flat)
	p.ShardPoints = shard.Points(points)
	return p
}

// hashStrings is the hex SHA-256 of the strings, each length-prefixed so no two lists collide.
func hashStrings(ss []string) string {
	h := sha256.New()
	for _, s := range ss {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

var errNoProvenance = errors.New("sweep.json records no provenance")

// shardInput is one input of a merge that is a sweep (or shard) folder.
type shardInput struct {
	arg   string // as given on the command line
	prov  *reports.SweepProvenance
	index int // the I of I/N
	count int // the N
	runs  int // runs its sweep table lists
}

// readShardInput reads the provenance a sweep folder recorded. It returns nil, nil for an
// input that is not a sweep folder (a run folder or a bare .duckdb file without sweep.json).
func readShardInput(arg, dbPath string) (*shardInput, error) {
	dir := filepath.Dir(dbPath)
	if filepath.Base(dbPath) != analysis.DBFile {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t reports.SweepTable
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: sweep.json is not valid JSON: %v", arg, err)
	}
	if t.Provenance == nil {
		return nil, fmt.Errorf("%s: %w (made by an older mayday?); re-run the shard, or pass --allow-partial to merge it unchecked", arg, errNoProvenance)
	}
	sh, err := pipeline.ParseShard(t.Provenance.Shard)
	if err != nil {
		return nil, fmt.Errorf("%s: sweep.json: shard %q is not I/N", arg, t.Provenance.Shard)
	}
	in := &shardInput{arg: arg, prov: t.Provenance, index: sh.Index, count: sh.Count}
	for _, r := range t.Rows {
		in.runs += len(r.RunIDs)
	}
	return in, nil
}

// checkShards refuses shards that do not make one whole sweep: made from another scenario,
// overrides, grid, seeds or binary than the first; cut into another number of slices; given
// twice; incomplete; or missing. With allowPartial only missing or incomplete shards are
// accepted, and the returned provenance says which are missing.
func checkShards(ins []*shardInput, allowPartial bool) (*reports.SweepProvenance, error) {
	first := ins[0]
	var problems []string
	seen := map[int]string{}
	for _, in := range ins {
		for _, d := range provenanceDiff(first.prov, in.prov) {
			problems = append(problems, fmt.Sprintf("%s was made with %s than %s", in.arg, d, first.arg))
		}
		if in.count != first.count {
			problems = append(problems, fmt.Sprintf("%s is shard %s but %s is shard %s: a sweep is cut into one number of slices", in.arg, in.prov.Shard, first.arg, first.prov.Shard))
			continue
		}
		sh := pipeline.Shard{Index: in.index, Count: in.count}
		if want := sh.Points(in.prov.GridPoints); !slices.Equal(want, in.prov.ShardPoints) {
			problems = append(problems, fmt.Sprintf("%s records grid points %v, but slice %s of a %d-point grid is %v", in.arg, in.prov.ShardPoints, sh, in.prov.GridPoints, want))
		}
		if prev, dup := seen[in.index]; dup {
			problems = append(problems, fmt.Sprintf("shard %s is given twice: %s and %s", in.prov.Shard, prev, in.arg))
		}
		seen[in.index] = in.arg
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("merge: the inputs are not shards of one sweep:\n  %s", strings.Join(problems, "\n  "))
	}
	var missing, incomplete []string
	for i := 1; i <= first.count; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, first.count))
		}
	}
	for _, in := range ins {
		if want := len(in.prov.ShardPoints) * in.prov.Seeds; in.runs != want {
			incomplete = append(incomplete, fmt.Sprintf("%s (shard %s) holds %d of its %d runs", in.arg, in.prov.Shard, in.runs, want))
		}
	}
	if (len(missing) > 0 || len(incomplete) > 0) && !allowPartial {
		var msg []string
		if len(missing) > 0 {
			verb := "shard %s of sweep %s is missing"
			if len(missing) > 1 {
				verb = "shards %s of sweep %s are missing"
			}
			msg = append(msg, fmt.Sprintf(verb, orWords(missing), first.prov.Scenario))
		}
		msg = append(msg, incomplete...)
		return nil, fmt.Errorf("merge: %s; give every shard, or pass --allow-partial to merge what is there and mark the sweep partial", strings.Join(msg, "; "))
	}
	p := *first.prov
	p.Shard, p.ShardPoints = "1/1", []int{}
	for _, in := range ins {
		p.ShardPoints = append(p.ShardPoints, in.prov.ShardPoints...)
	}
	slices.Sort(p.ShardPoints)
	p.Partial = len(missing) > 0 || len(incomplete) > 0
	p.MissingShards = missing
	return &p, nil
}

// provenanceDiff names what differs between two shards' provenance, as "another X" phrases.
func provenanceDiff(a, b *reports.SweepProvenance) []string {
	var d []string
	if a.Scenario != b.Scenario || a.ScenarioHash != b.ScenarioHash {
		d = append(d, fmt.Sprintf("another scenario (%s %.12s vs %s %.12s)", b.Scenario, b.ScenarioHash, a.Scenario, a.ScenarioHash))
	}
	if a.OverridesHash != b.OverridesHash {
		d = append(d, fmt.Sprintf("other --set overrides (%s vs %s)", pathList(b.OverridePaths), pathList(a.OverridePaths)))
	}
	if a.GridHash != b.GridHash || a.GridPoints != b.GridPoints {
		d = append(d, fmt.Sprintf("another grid (%d points vs %d)", b.GridPoints, a.GridPoints))
	}
	if a.FirstSeed != b.FirstSeed || a.Seeds != b.Seeds {
		d = append(d, fmt.Sprintf("other seeds (%d from %d vs %d from %d)", b.Seeds, b.FirstSeed, a.Seeds, a.FirstSeed))
	}
	if a.Version != b.Version {
		d = append(d, fmt.Sprintf("another mayday binary (version %s vs %s)", b.Version, a.Version))
	}
	return d
}

func pathList(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	return strings.Join(paths, ", ")
}

func orWords(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
