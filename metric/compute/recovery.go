package compute

import (
	"cmp"
	"github.com/mayday-sim/mayday/metric/detect"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mayday-sim/mayday/sim/record"
)

// kindNames are the names of the sign kinds (disruptions.kind), by kind.
var kindNames = [...]string{kindFailed: "failed", kindTimedOut: "timed_out", kindBlocked: "blocked",
	kindInvalid: "invalid", kindCrashed: "crashed", kindParked: "parked", kindThrottled: "throttled"}

// at is the TIMESTAMP of an instant in µs since the records' time 0.
func (s *Sink) at(us int64) Time { return Time(s.origin + us) }

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
	// A sign without a tool of its own has its operation's (disruptions.tool); ties at one
	// instant, revision, kind and detection go to the tool first by name, one without last.
	for i := range e.signs {
		if sg := &e.signs[i]; sg.tool == noTool {
			if j, ok := s.opIndex(e, sg.key); ok {
				sg.tool = e.ops[j].tool
			}
		}
	}
	toolOrder := func(a, b int32) int {
		switch {
		case a == b:
			return 0
		case a == noTool:
			return 1
		case b == noTool:
			return -1
		}
		return strings.Compare(s.tools.list[a], s.tools.list[b])
	}
	slices.SortFunc(e.signs, func(a, b sign) int {
		return cmp.Or(byStep(a.key, b.key), cmp.Compare(a.at, b.at), cmp.Compare(a.key.Revision, b.key.Revision),
			cmp.Compare(a.kind, b.kind), cmp.Compare(a.known, b.known), toolOrder(a.tool, b.tool))
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
		outcome, end := uint8(outcomeInFlight), int64(0)
		switch {
		case recovered:
			outcome, end = outcomeRecovered, validAt
		case e.seen && e.ended:
			outcome, end = outcomeEnded, us(e.endedAt)
		}
		if outcome == outcomeInFlight {
			s.censored = append(s.censored, start)
		} else {
			s.episodesDone = append(s.episodesDone, (end-start)<<2|int64(outcome))
		}
		if !s.opts.Tables {
			continue
		}
		// first.tool is already its operation's tool when the sign named none (above).
		row := episodeRec{key: k, inv: e.id, start: start, detected: first.known, end: end, signs: signs, failed: failedAttempts,
			firstKind: first.kind, tool: first.tool, endedAs: notEnded, outcome: outcome}
		if e.seen {
			row.root, row.endedAs = e.root, s.finals.id(e.finalState)
		}
		if i := s.episodeRows.add(row); outcome == outcomeInFlight {
			s.openEpisodes = append(s.openEpisodes, i)
		}
	}
}

// episodeRec is a recovery_episodes row as the Sink keeps it until the run ends: no
// pointer, a third of the row's size (a run of a million investigations settles about a
// million episodes), made into an Episode by row.
type episodeRec struct {
	key                  record.OpKey
	inv, root            int64
	start, detected, end int64 // µs; end is the run's for an episode in flight at the end
	signs, failed        int64
	tool, endedAs        int32 // endedAs: an id of Sink.finals, notEnded when the investigation was not seen
	firstKind            uint8
	outcome              uint8
}

// seconds is the episode's length, its row's seconds.
func (e *episodeRec) seconds() float64 { return float64(e.end-e.start) / 1e6 }

const notEnded = -2 // episodeRec.endedAs of an investigation not seen (finals.id("") is -1)

// The outcomes of an episode; recovered and ended are also the low bits of episodesDone.
const (
	outcomeRecovered = iota
	outcomeEnded
	outcomeInFlight
)

var outcomeNames = [...]string{outcomeRecovered: "recovered", outcomeEnded: "ended", outcomeInFlight: "in_flight"}

// row is the recovery_episodes row of e.
func (s *Sink) row(e *episodeRec, runID string) Episode {
	row := Episode{RunID: runID, InvestigationID: Int(e.inv), OpKey: String(opKeyText(e.key)), StepKey: stepKeyText(e.key),
		FirstKind: String(kindNames[e.firstKind]), Signs: e.signs, FailedAttempts: e.failed,
		Start: s.at(e.start), DetectedAt: TimeAt(s.at(e.detected)), DetectionSeconds: Float(float64(e.detected-e.start) / 1e6),
		End: s.at(e.end), Outcome: outcomeNames[e.outcome], Seconds: e.seconds(),
		RepairSeconds: Float(float64(e.end-e.detected) / 1e6)}
	if e.tool != noTool {
		row.Tool = String(s.tools.list[e.tool])
	}
	switch e.endedAs {
	case notEnded:
	case -1:
		row.RootID, row.EndedAs = Int(e.root), String("")
	default:
		row.RootID, row.EndedAs = Int(e.root), String(s.finals.list[e.endedAs])
	}
	return row
}

// opKeyText is an op_key as the trace stores it: '<investigation>/<step>/<revision>'.
func opKeyText(k record.OpKey) string {
	return stepKeyText(k) + "/" + strconv.FormatInt(int64(k.Revision), 10)
}

// stepKeyText is a step's key: '<investigation>/<step>'.
func stepKeyText(k record.OpKey) string {
	return strconv.FormatInt(k.Investigation, 10) + "/" + strconv.FormatInt(int64(k.Step), 10)
}

// recovery sets median_recovery_time, p95_recovery_time and episode_recovery_rate, and
// makes the rows of recovery_curve: every episode's length and outcome, grouped by length.
// It walks the sorted lengths once, a group at a time, and makes the curve's rows at their
// number: at a million investigations the curve has a row for nearly every episode, and
// lists grown as they fill held up to twice that while they were copied.
func (s *Sink) recovery(r Row, end int64) {
	all := s.episodesDone
	for _, start := range s.censored {
		all = append(all, (end-start)<<2|2)
	}
	slices.Sort(all)
	groups := 0
	for i, x := range all {
		if i == 0 || all[i-1]>>2 != x>>2 {
			groups++
		}
	}
	s.curveRows = slices.Grow(s.curveRows, groups)
	var recovered float64
	median, p95 := math.NaN(), math.NaN()
	atRisk := float64(len(all))
	open, share := 1.0, 0.0
	for i := 0; i < len(all); {
		length := all[i] >> 2
		secs := float64(length) / 1e6
		var rec, never, censored float64
		for ; i < len(all) && all[i]>>2 == length; i++ {
			switch all[i] & 3 {
			case 0:
				rec++
			case 1:
				never++
			default:
				censored++
			}
		}
		recovered += rec
		share += open * rec / atRisk
		if math.IsNaN(median) && share >= 0.5-1e-9 {
			median = secs
		}
		if math.IsNaN(p95) && share >= 0.95-1e-9 {
			p95 = secs
		}
		s.curveRows = append(s.curveRows, CurvePoint{Seconds: secs, AtRisk: int64(atRisk),
			Recovered: int64(rec), NeverRecovered: int64(never), Censored: int64(censored),
			OpenBefore: open, RecoveredShare: share})
		open *= 1 - (rec+never)/atRisk
		atRisk -= rec + never + censored
	}
	r.set("episode_recovery_rate", ratio(recovered, float64(len(all))))
	r.set("median_recovery_time", median)
	r.set("p95_recovery_time", p95)
}

// goodput sets goodput_recovery_time and goodput_recovered by the goodput rule of package
// metric/detect (docs/metrics.md, goodput_recovery_time): valid results counted in windows
// of results, so that it scales with the run's time; and makes the rows of goodput, the
// valid results of each minute.
func (s *Sink) goodput(r Row, end int64) error {
	r.set("goodput_recovery_time", math.NaN())
	r.set("goodput_recovered", math.NaN())
	if len(s.rootArrived) > 0 {
		validAt := decodeSorted(&s.validAt, nil, fromOrderedBits)
		s.validAt = packedList{} // read once, as the calls are
		g, err := detect.GoodputRecovery(validAt, slices.Min(s.rootArrived), slices.Max(s.rootArrived), s.windows)
		if err != nil {
			return err
		}
		if g.Tested {
			r.set("goodput_recovered", 0)
		}
		if g.Recovered {
			r.set("goodput_recovered", 1)
			r.set("goodput_recovery_time", float64(g.Time)/1e6)
		}
	}
	if !s.opts.Tables {
		return nil
	}
	_, lastArrival, arrived := s.arrivalMinutes()
	last := int64(-1)
	if arrived {
		last = lastArrival
	}
	s.goodputRows = slices.Grow(s.goodputRows, int(end/usPerMinute)+1)
	for m := int64(0); m <= end/usPerMinute; m++ {
		row := GoodputMinute{Minute: m, Start: s.at(m * usPerMinute), ArrivalsContinue: m <= last}
		if m < int64(len(s.validPerMinute)) {
			row.ValidResults = s.validPerMinute[m]
		}
		if s.hasWindow {
			row.FirstFaultAt, row.FaultEndAt = TimeAt(s.at(s.firstWindow)), TimeAt(s.at(s.lastWindow))
		}
		s.goodputRows = append(s.goodputRows, row)
	}
	return nil
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
