package compute

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/mayday-sim/mayday/sim/record"
)

// kindNames are the names of the sign kinds (disruptions.kind), by kind.
var kindNames = [...]string{kindFailed: "failed", kindTimedOut: "timed_out", kindBlocked: "blocked",
	kindInvalid: "invalid", kindCrashed: "crashed", kindParked: "parked", kindThrottled: "throttled"}

// at is the TIMESTAMP of an instant in µs since the records' time 0.
func (s *Sink) at(us int64) Time {
	if s.opts.Origin != 0 {
		return Time(s.opts.Origin + us)
	}
	return Time(epochNs/1000 + us)
}

// episodes takes the disrupted steps of investigation e (docs/metrics.md, recovery
// episodes): each from its first sign until a valid result of the step, else the
// investigation's end, else the run's end (measured in Finish). Its first sign is the
// earliest, then the lowest revision, then the first kind in the order of kindNames.
func (s *Sink) episodes(e *inv) {
	if len(e.signs) == 0 {
		return
	}
	byStep := func(a, b record.OpKey) int {
		return cmp.Or(cmp.Compare(a.Investigation, b.Investigation), cmp.Compare(a.Step, b.Step))
	}
	slices.SortFunc(e.signs, func(a, b sign) int {
		return cmp.Or(byStep(a.key, b.key), cmp.Compare(a.at, b.at), cmp.Compare(a.key.Revision, b.key.Revision),
			cmp.Compare(a.kind, b.kind), cmp.Compare(a.known, b.known), cmp.Compare(a.tool, b.tool))
	})
	slices.SortFunc(e.valids, func(a, b valid) int { return byStep(a.key, b.key) })
	v := 0
	for i := 0; i < len(e.signs); {
		first := e.signs[i]
		k, start := first.key, first.at
		var signs, failedAttempts int64
		for ; i < len(e.signs) && byStep(e.signs[i].key, k) == 0; i++ {
			signs++
			if kd := e.signs[i].kind; kd == kindFailed || kd == kindTimedOut {
				failedAttempts++
			}
		}
		for v < len(e.valids) && byStep(e.valids[v].key, k) < 0 {
			v++
		}
		recovered, validAt := false, int64(0)
		for w := v; w < len(e.valids) && byStep(e.valids[w].key, k) == 0; w++ {
			if end := e.valids[w].end; end >= start && (!recovered || end < validAt) {
				recovered, validAt = true, end
			}
		}
		if !s.opts.Tables {
			switch {
			case recovered:
				s.episodesDone = append(s.episodesDone, (validAt-start)<<2)
			case e.seen && e.ended:
				s.episodesDone = append(s.episodesDone, (us(e.endedAt)-start)<<2|1)
			default:
				s.censored = append(s.censored, start)
			}
			continue
		}
		row := Episode{InvestigationID: Int(e.id), OpKey: String(opKeyText(k)),
			StepKey: stepKeyText(k), FirstKind: String(kindNames[first.kind]),
			Signs: signs, FailedAttempts: failedAttempts, Start: s.at(start), DetectedAt: TimeAt(s.at(first.known)),
			DetectionSeconds: Float(float64(first.known-start) / 1e6)}
		tool := first.tool
		if tool == noTool {
			if j, ok := s.opIndex(e, first.key); ok {
				tool = e.ops[j].tool
			}
		}
		if tool != noTool {
			row.Tool = String(s.tools[tool])
		}
		if e.seen {
			row.RootID, row.EndedAs = Int(e.root), String(e.finalState)
		}
		end := int64(0)
		switch {
		case recovered:
			end, row.Outcome = validAt, "recovered"
			s.episodesDone = append(s.episodesDone, (validAt-start)<<2)
		case e.seen && e.ended:
			end, row.Outcome = us(e.endedAt), "ended"
			s.episodesDone = append(s.episodesDone, (us(e.endedAt)-start)<<2|1)
		default:
			row.Outcome = "in_flight"
			s.censored = append(s.censored, start)
			s.openEpisodes = append(s.openEpisodes, len(s.episodeRows))
		}
		if row.Outcome != "in_flight" {
			s.endEpisode(&row, end)
		}
		s.episodeRows = append(s.episodeRows, row)
	}
}

// opKeyText is an op_key as the trace stores it: '<investigation>/<step>/<revision>'.
func opKeyText(k record.OpKey) string {
	return stepKeyText(k) + "/" + strconv.FormatInt(int64(k.Revision), 10)
}

// stepKeyText is a step's key: '<investigation>/<step>'.
func stepKeyText(k record.OpKey) string {
	return strconv.FormatInt(k.Investigation, 10) + "/" + strconv.FormatInt(int64(k.Step), 10)
}

// endEpisode sets the end of an episode row and the times that follow from it (end: µs).
func (s *Sink) endEpisode(row *Episode, end int64) {
	start, detected := int64(row.Start)-int64(s.at(0)), int64(row.DetectedAt.V)-int64(s.at(0))
	row.End = s.at(end)
	row.Seconds = float64(end-start) / 1e6
	row.RepairSeconds = Float(float64(end-detected) / 1e6)
}

// recovery sets median_recovery_time, p95_recovery_time and episode_recovery_rate.
func (s *Sink) recovery(r Row, end int64) {
	// every episode's length and outcome, grouped by length as recovery_curve does.
	type tally struct{ recovered, never, censored float64 }
	all := s.episodesDone
	for _, start := range s.censored {
		all = append(all, (end-start)<<2|2)
	}
	slices.Sort(all)
	var recovered float64
	var lengths []float64
	var tallies []tally
	for i, x := range all {
		secs := float64(x>>2) / 1e6
		if i == 0 || all[i-1]>>2 != x>>2 {
			lengths = append(lengths, secs)
			tallies = append(tallies, tally{})
		}
		t := &tallies[len(tallies)-1]
		switch x & 3 {
		case 0:
			t.recovered++
			recovered++
		case 1:
			t.never++
		default:
			t.censored++
		}
	}
	r.set("episode_recovery_rate", ratio(recovered, float64(len(all))))
	median, p95 := math.NaN(), math.NaN()
	atRisk := float64(len(all))
	open, share := 1.0, 0.0
	for i, secs := range lengths {
		t := tallies[i]
		share += open * t.recovered / atRisk
		if math.IsNaN(median) && share >= 0.5-1e-9 {
			median = secs
		}
		if math.IsNaN(p95) && share >= 0.95-1e-9 {
			p95 = secs
		}
		s.curveRows = append(s.curveRows, CurvePoint{Seconds: secs, AtRisk: int64(atRisk),
			Recovered: int64(t.recovered), NeverRecovered: int64(t.never), Censored: int64(t.censored),
			OpenBefore: open, RecoveredShare: share})
		open *= 1 - (t.recovered+t.never)/atRisk
		atRisk -= t.recovered + t.never + t.censored
	}
	r.set("median_recovery_time", median)
	r.set("p95_recovery_time", p95)
}

// goodput sets goodput_recovery_time and goodput_recovered, and makes the rows of goodput
// (docs/metrics.md, goodput_recovery_time).
func (s *Sink) goodput(r Row, end int64) {
	r.set("goodput_recovery_time", math.NaN())
	r.set("goodput_recovered", math.NaN())
	minutes := end/usPerMinute + 1
	valid := func(m int64) int64 {
		if m >= 0 && m < int64(len(s.validPerMinute)) {
			return s.validPerMinute[m]
		}
		return 0
	}
	firstArrival, lastArrival, arrived := s.arrivalMinutes()
	// The steady state: the second half of [first arrival's minute, first window's minute).
	var base, sd, threshold float64
	haveBase := false
	if s.hasWindow && arrived {
		faultMinute := s.firstWindow / usPerMinute
		var n, sum int64
		var mean, d2 float64 // Welford's running mean and squared deviations, as stddev_samp
		for m := max(firstArrival+(faultMinute-firstArrival+1)/2, 0); m < faultMinute && m < minutes; m++ {
			x := float64(valid(m))
			n, sum = n+1, sum+valid(m)
			delta := x - mean
			mean += delta / float64(n)
			d2 += delta * (x - mean)
		}
		if n >= 5 {
			haveBase = true
			base = float64(sum) / float64(n)
			sd = math.Sqrt(d2 / float64(n-1))
			threshold = 4.5*base - 2.326*math.Sqrt(5)*sd
		}
	}
	last := int64(-1)
	if arrived {
		last = lastArrival
	}
	var window int64 // valid results of minutes m .. m+4
	for m := int64(0); m < min(5, minutes); m++ {
		window += valid(m)
	}
	found := false
	for m := int64(0); m < minutes; m++ {
		row := GoodputMinute{Minute: m, Start: s.at(m * usPerMinute), ValidResults: valid(m),
			ArrivalsContinue: m <= last}
		if s.hasWindow {
			row.FirstFaultAt, row.FaultEndAt = TimeAt(s.at(s.firstWindow)), TimeAt(s.at(s.lastWindow))
		}
		full := m+4 < minutes
		if full {
			row.WindowResults = Int(window)
		}
		if haveBase {
			row.Baseline, row.BaselineSD, row.Threshold = Float(base), Float(sd), Float(threshold)
			row.Recovered = Bool(full && float64(window) >= threshold)
		} else if !full {
			row.Recovered = Bool(false)
		}
		if s.opts.Tables {
			s.goodputRows = append(s.goodputRows, row)
		}
		// The first full window after the last fault window, while roots still arrive,
		// whose results reach the threshold.
		if haveBase && base > 0 && !found && m >= max(s.lastWindow/usPerMinute, 0) && full && m+4 <= lastArrival {
			r.set("goodput_recovered", 0)
			if float64(window) >= threshold {
				found = true
				r.set("goodput_recovery_time", max(0, float64(m*usPerMinute-s.lastWindow)/1e6))
				r.set("goodput_recovered", 1)
			}
		}
		window += valid(m+5) - valid(m)
	}
}

// arrivalMinutes returns the minutes of the first and the last root arrival; ok false
// without a root.
func (s *Sink) arrivalMinutes() (first, last int64, ok bool) {
	if len(s.rootArrived) == 0 {
		return 0, 0, false
	}
	lo, hi := slices.Min(s.rootArrived), slices.Max(s.rootArrived)
	return lo / usPerMinute, hi / usPerMinute, true
}
