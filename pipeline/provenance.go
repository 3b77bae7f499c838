//go:build duckdb_arrow

package pipeline

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
	"github.com/mayday-sim/mayday/scenarios"
	"github.com/mayday-sim/mayday/traces"
)

// A sweep's provenance, and the checks `mayday merge` makes with it: shards merge into a
// sweep only when they come from one scenario, overrides, grid, seeds and binary, are cut
// into one number of slices, each appear once and hold all their runs, and their data
// agrees with what their sweep.json says.

// SweepProvenance is what a sweep folder's sweep.json records about how it was made, so
// `mayday merge` can tell whether shards belong to one sweep. Values that could carry a secret
// (override values, grid values) are kept only as hashes.
type SweepProvenance struct {
	Scenario      string     `json:"scenario"`
	ScenarioHash  string     `json:"scenario_hash"` // of the resolved scenario, --set overrides applied
	OverridePaths []string   `json:"override_paths"`
	OverridesHash string     `json:"overrides_hash"` // of the --set flags, in order
	Grid          []GridAxis `json:"grid"`
	GridHash      string     `json:"grid_hash"` // of every axis path and value, in order
	GridPoints    int        `json:"grid_points"`
	FirstSeed     uint64     `json:"first_seed"`
	Seeds         int        `json:"seeds"`
	Version       string     `json:"version"`
	Shard         string     `json:"shard"`        // I/N; 1/1 for a whole sweep or a full merge
	ShardPoints   []int      `json:"shard_points"` // the grid points this shard owns
	Partial       bool       `json:"partial"`      // a merge that lacks shards (--allow-partial)
	MissingShards []string   `json:"missing_shards,omitempty"`
}

// GridAxis is one axis of a sweep's grid: its path and how many values it takes.
type GridAxis struct {
	Path   string `json:"path"`
	Values int    `json:"values"`
}

// NewProvenance is the provenance of shard of a sweep of base (with the --set flags sets)
// over the grid axes (points points), seeds seeds from seed0, made by mayday version.
func NewProvenance(base *scenarios.Scenario, sets []string, axes []scenarios.SweepAxis, points int, seed0 uint64, seeds int, shard Shard, version string) *SweepProvenance {
	p := &SweepProvenance{
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
		p.Grid = append(p.Grid, GridAxis{Path: a.Path, Values: len(a.Values)})
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

// ErrNoProvenance: a sweep folder's sweep.json records no provenance.
var ErrNoProvenance = errors.New("sweep.json records no provenance")

// MergeInput is one database given to merge, with what its runs rows say: the truth that
// its sweep.json (a convenience) is checked against.
type MergeInput struct {
	Arg, Path string // as given, and the database file
	Runs      []analysis.RunInfo
	shard     *shardInput // nil: no sweep.json beside it
}

// shardInput is one input of a merge that is a sweep (or shard) folder.
type shardInput struct {
	arg   string // as given on the command line
	prov  *SweepProvenance
	index int // the I of I/N
	count int // the N
	runs  int // runs its sweep table lists
}

// sweepFile is what the checks read of sweep.json: the provenance and the runs it lists.
type sweepFile struct {
	Provenance *SweepProvenance `json:"provenance"`
	Rows       []struct {
		RunIDs []string `json:"run_ids"`
	} `json:"points"`
}

// readShardInput reads the provenance a sweep folder recorded. It returns nil, nil for an
// input that is not a sweep folder (a run folder or a bare .duckdb file without sweep.json).
func readShardInput(arg, dbPath string) (*shardInput, error) {
	dir := filepath.Dir(dbPath)
	if filepath.Base(dbPath) != analysis.DBFile {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, analysis.SweepFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t sweepFile
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: sweep.json is not valid JSON: %v", arg, err)
	}
	if t.Provenance == nil {
		return nil, fmt.Errorf("%s: %w (made by an older mayday?); re-run the shard, or pass --allow-partial to merge it unchecked", arg, ErrNoProvenance)
	}
	sh, err := ParseShard(t.Provenance.Shard)
	if err != nil {
		return nil, fmt.Errorf("%s: sweep.json: shard %q is not I/N", arg, t.Provenance.Shard)
	}
	in := &shardInput{arg: arg, prov: t.Provenance, index: sh.Index, count: sh.Count}
	for _, r := range t.Rows {
		in.runs += len(r.RunIDs)
	}
	return in, nil
}

// MergeProvenance checks the inputs of a merge, whose runs have been read: runs cut short
// are refused unless allowPartial (then cut is true, and the result is partial), and the
// inputs that are sweep folders are checked against each other and against their data
// (checkShards, checkShardData). It returns the provenance of the merged sweep, nil when
// no input is one. Every error is a problem of the inputs.
func MergeProvenance(ins []*MergeInput, allowPartial bool) (prov *SweepProvenance, cut bool, err error) {
	cut, err = partialRuns(ins, allowPartial)
	if err != nil {
		return nil, false, err
	}
	var shards []*shardInput
	for _, in := range ins {
		sh, err := readShardInput(in.Arg, in.Path)
		if errors.Is(err, ErrNoProvenance) && allowPartial {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		if sh != nil {
			in.shard = sh
			shards = append(shards, sh)
		}
	}
	if len(shards) == 0 {
		return nil, cut, nil
	}
	// Both say what they found: sweep.json's provenance compared across the shards, and
	// each shard's data compared with its sweep.json (which also counts the runs held).
	dataErr := checkShardData(ins)
	prov, err = checkShards(shards, allowPartial)
	if err := errors.Join(err, dataErr); err != nil {
		return nil, false, err
	}
	if cut {
		prov.Partial = true
	}
	return prov, cut, nil
}

// partialRuns refuses runs cut short (status other than complete) unless allowPartial; it
// reports whether any was accepted, so that the result is marked partial.
func partialRuns(ins []*MergeInput, allowPartial bool) (bool, error) {
	var cut []string
	for _, in := range ins {
		for _, r := range in.Runs {
			if r.Status != traces.StatusComplete {
				cut = append(cut, fmt.Sprintf("%s: run %s has status %q", in.Arg, r.RunID, r.Status))
			}
		}
	}
	if len(cut) > 0 && !allowPartial {
		return false, fmt.Errorf("merge: %s; these runs were cut short: pass --allow-partial to merge them and mark the result partial",
			strings.Join(cut, "; "))
	}
	return len(cut) > 0, nil
}

// checkShardData checks each sweep folder's runs against the provenance its sweep.json
// records, and every other input against the sweep: each run must be of the sweep's
// scenario and binary, one of its seeds, at a grid point of its slice, with the sweep's
// axes. It sets each shard's run count from the data. An input without sweep.json among
// sweep folders is refused, naming it.
func checkShardData(ins []*MergeInput) error {
	var sweep *SweepProvenance
	for _, in := range ins {
		if in.shard != nil {
			sweep = in.shard.prov
			break
		}
	}
	if sweep == nil {
		return nil
	}
	var problems []string
	for _, in := range ins {
		if in.shard == nil {
			problems = append(problems, fmt.Sprintf("%s does not belong to sweep %s: it is not a sweep folder (no sweep.json)", in.Arg, sweep.Scenario))
			continue
		}
		problems = append(problems, shardDataProblems(in)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("merge: the data disagrees with the sweep:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// shardDataProblems compares one shard's runs with its own provenance; it counts the
// distinct (point, seed) pairs the data holds into the shard's runs.
func shardDataProblems(in *MergeInput) []string {
	p := in.shard.prov
	var axes []string
	for _, a := range p.Grid {
		axes = append(axes, a.Path)
	}
	type key struct {
		point int
		seed  uint64
	}
	held := map[key]bool{}
	var out []string
	bad := func(r analysis.RunInfo, format string, a ...any) {
		out = append(out, fmt.Sprintf("%s: run %s %s", in.Arg, r.RunID, fmt.Sprintf(format, a...)))
	}
	for _, r := range in.Runs {
		var paths []string
		for _, sp := range r.Params {
			paths = append(paths, sp.Path)
		}
		switch {
		case r.Scenario != p.Scenario:
			bad(r, "is of scenario %q, not %q", r.Scenario, p.Scenario)
		case r.Version != p.Version:
			bad(r, "was made by mayday %s, not %s", r.Version, p.Version)
		case r.Seed < p.FirstSeed || r.Seed-p.FirstSeed >= uint64(p.Seeds):
			bad(r, "has seed %d, outside the sweep's %d seeds from %d", r.Seed, p.Seeds, p.FirstSeed)
		case r.Point < 0 || !slices.Contains(p.ShardPoints, r.Point):
			bad(r, "is at grid point %d, not one of the shard's %v", r.Point, p.ShardPoints)
		case !slices.Equal(paths, axes):
			bad(r, "varies %s, not the sweep's axes %s", pathList(paths), pathList(axes))
		case held[key{r.Point, r.Seed}]:
			bad(r, "repeats grid point %d seed %d", r.Point, r.Seed)
		default:
			held[key{r.Point, r.Seed}] = true
		}
	}
	in.shard.runs = len(held)
	return out
}

// checkShards refuses shards that do not make one whole sweep: made from another scenario,
// overrides, grid, seeds or binary than the first; cut into another number of slices; given
// twice; incomplete; or missing. With allowPartial only missing or incomplete shards are
// accepted, and the returned provenance says which are missing.
func checkShards(ins []*shardInput, allowPartial bool) (*SweepProvenance, error) {
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
		sh := Shard{Index: in.index, Count: in.count}
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
func provenanceDiff(a, b *SweepProvenance) []string {
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
