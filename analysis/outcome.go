package analysis

import (
	"strconv"
	"time"
)

// Outcome is one run as its runner saw it once the run was stored: its id, seed, digest and
// status, how many events it processed, its wall time, and its metrics row.
type Outcome struct {
	RunID   string
	Seed    uint64
	Digest  string
	Status  string // complete | partial
	Events  int64  // events the simulation processed
	Wall    time.Duration
	Metrics Metrics
}

// RunID names the run of a scenario with a seed: "<name>-s<seed>".
func RunID(name string, seed uint64) string { return name + "-s" + strconv.FormatUint(seed, 10) }

// SweepRunID names the run of seed `seed` at grid point `point` of a sweep:
// "<name>-p<point>-s<seed>".
func SweepRunID(name string, point int, seed uint64) string {
	return name + "-p" + strconv.Itoa(point) + "-s" + strconv.FormatUint(seed, 10)
}
