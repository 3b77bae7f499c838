package fit

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Source describes the run a scenario was fitted to, for the file's header.
type Source struct {
	Run      string // the run's id
	Attempts int    // tool attempts read
}

// WriteYAML writes s as a scenario file in mayday's format. Every fitted value carries a
// comment with its 95% interval or its fit (the family's AIC beside the other families',
// the KS distance, the sample size), and what could not be fitted is a comment too.
func (s Scenario) WriteYAML(w io.Writer, src Source) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Fitted by mayday fit to run %s (%d root investigations, %d tool attempts).\n", src.Run, s.Investigations, src.Attempts)
	b.WriteString("# A distribution's family is the one of least AIC = 2k - 2 ln L among those tried (lower\n")
	b.WriteString("# is better); KS is the Kolmogorov-Smirnov distance of the data from the fit; [lo, hi]\n")
	b.WriteString("# are 95% intervals (Wilson for shares, exact Poisson for rates). See docs/fit.md.\n")
	fmt.Fprintf(b, "name: %s\n", s.Name)
	fmt.Fprintf(b, "description: fitted to run %s\n", strconv.Quote(src.Run))
	s.writeWorkload(b)
	if m := s.Model; m != nil {
		fmt.Fprintf(b, "model: {latency_per_1k_tokens: %s}   # a turn's time on its tokens, least squares over %d turns; 95%% [%s, %s]\n",
			dur(m.Per1k), m.N, dur(m.Lo), dur(m.Hi))
	}
	s.writeTools(b)
	s.writeFaults(b)
	s.writeRecovery(b)
	for _, n := range s.Notes {
		fmt.Fprintf(b, "# note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (s Scenario) writeWorkload(b *strings.Builder) {
	b.WriteString("workload:\n")
	fmt.Fprintf(b, "  investigations: %d\n", s.Investigations)
	a := s.Arrival
	if a.AtOnce {
		b.WriteString("  arrival: {at_once: true}   # every root arrived at one instant\n")
	} else {
		if len(a.Piecewise) > 1 {
			var parts []string
			for i, p := range a.Piecewise {
				if i == len(a.Piecewise)-1 {
					parts = append(parts, fmt.Sprintf("{rate: %s}", perHour(p.PerSec)))
				} else {
					parts = append(parts, fmt.Sprintf("{rate: %s, for: %s}", perHour(p.PerSec), dur(p.To-p.From)))
				}
			}
			fmt.Fprintf(b, "  arrival: {piecewise: [%s]}   # the rate changed (likelihood-ratio test, docs/fit.md); %d arrivals over %s, on average %s\n",
				strings.Join(parts, ", "), a.Rate.Events, dur(a.Rate.Seconds), perHour(a.Rate.PerSec))
			for _, p := range a.Piecewise {
				fmt.Fprintf(b, "  #   %s to %s: %s, 95%% [%s, %s], %d arrivals\n", dur(p.From), dur(p.To),
					perHour(p.PerSec), perHour(p.Lo), perHour(p.Hi), p.Events)
			}
		} else {
			fmt.Fprintf(b, "  arrival: {poisson: %s}   # %d arrivals over %s; 95%% [%s, %s]\n",
				perHour(a.Rate.PerSec), a.Rate.Events, dur(a.Rate.Seconds), perHour(a.Rate.Lo), perHour(a.Rate.Hi))
		}
	}
	if s.Steps != nil {
		fmt.Fprintf(b, "  steps: %s   # %s\n", distYAML(*s.Steps, false, ""), quality(*s.Steps))
	}
	if s.Think != nil {
		less := ""
		if s.Model != nil {
			less = ", less their tokens' latency (model.latency_per_1k_tokens)"
		}
		fmt.Fprintf(b, "  think: %s   # model turns%s; %s; median %s [%s, %s]\n", distYAML(*s.Think, true, ""), less, quality(*s.Think),
			dur(s.ThinkMedian[0]), dur(s.ThinkMedian[1]), dur(s.ThinkMedian[2]))
	}
	if s.Tokens != nil {
		g := ""
		if s.Growth.Factor != 1 {
			g = ", growth: " + num(s.Growth.Factor)
		}
		fmt.Fprintf(b, "  tokens: %s   # per turn; growth per step 95%% [%s, %s]; %s\n", distYAML(*s.Tokens, false, g),
			num(s.Growth.Lo), num(s.Growth.Hi), quality(*s.Tokens))
	}
	if len(s.Mix) > 0 {
		var parts, notes []string
		for _, m := range s.Mix {
			parts = append(parts, fmt.Sprintf("%s: %s", yamlText(m.Tool), num(m.P.P)))
			notes = append(notes, fmt.Sprintf("%s [%s, %s]", yamlText(m.Tool), num(m.P.Lo), num(m.P.Hi)))
		}
		fmt.Fprintf(b, "  tools: {%s}   # shares of operations: %s\n", strings.Join(parts, ", "), strings.Join(notes, ", "))
	}
	if sa := s.Subagents; sa != nil {
		fmt.Fprintf(b, "  subagents:\n    probability: %s   # %d spawns in %d steps; 95%% [%s, %s]\n", num(sa.Probability.P),
			sa.Probability.K, sa.Probability.N, num(sa.Probability.Lo), num(sa.Probability.Hi))
		fmt.Fprintf(b, "    count: %s   # subagents per spawn; %s\n", distYAML(sa.Count, false, ""), quality(sa.Count))
		fmt.Fprintf(b, "    max_depth: %d\n", sa.MaxDepth)
	}
}

func (s Scenario) writeTools(b *strings.Builder) {
	b.WriteString("tools:\n")
	for _, t := range s.Tools {
		fmt.Fprintf(b, "  %s:\n", yamlText(t.Name))
		if t.Latency != nil {
			fmt.Fprintf(b, "    latency: %s   # %s; median %s [%s, %s]\n", distYAML(*t.Latency, true, ""), quality(*t.Latency),
				dur(t.Median[0]), dur(t.Median[1]), dur(t.Median[2]))
		} else {
			b.WriteString("    # latency: no success outside incidents to fit\n")
		}
		switch {
		case t.TimedOut > 0:
			fmt.Fprintf(b, "    timeout: %s   # its slowest success: the timed-out attempts' median length, %s, is below it (see the notes)\n", dur(t.Timeout), dur(t.TimedOut))
		case t.Timeout > 0:
			fmt.Fprintf(b, "    timeout: %s   # the median length of its timed-out attempts; the slowest success took %s\n", dur(t.Timeout), dur(t.Slowest))
		}
		switch t.Idempotency {
		case "keyed":
			b.WriteString("    idempotency: keyed   # lookups found earlier results\n")
		case "natural":
			b.WriteString("    idempotency: natural   # lookups found nothing\n")
		}
	}
}

func (s Scenario) writeFaults(b *strings.Builder) {
	var lines []string
	ids := faultIDs{}
	n := map[string]int{}
	for _, f := range s.Faults {
		n[f.Tool+"\x00"+f.Kind]++
		id := ids.make(fmt.Sprintf("%s-%s-%d", f.Tool, f.Kind, n[f.Tool+"\x00"+f.Kind]))
		extra := ""
		if f.Kind == "brownout" {
			extra = fmt.Sprintf(", probability: %s, slowdown: %s", num(min(1, f.Probability)), num(f.Slowdown))
		}
		lines = append(lines, fmt.Sprintf("  - {id: %s, kind: %s, tool: %s, at: %s, for: %s%s}   # incident %s to %s: %d of %d attempts failed",
			id, f.Kind, yamlText(f.Tool), dur(f.At), dur(f.For), extra, dur(f.Incident.Start), dur(f.Incident.End), f.Failed, f.Attempts))
	}
	for _, t := range s.Tools {
		if p := t.Transient; p.K > 0 {
			lines = append(lines, fmt.Sprintf("  - {id: %s, kind: transient, tool: %s, probability: %s}   # %d of %d attempts outside fault windows failed fast; 95%% [%s, %s]",
				ids.make(t.Name+"-transient"), yamlText(t.Name), num(p.P), p.K, p.N, num(p.Lo), num(p.Hi)))
		}
	}
	for _, t := range s.Tools {
		if p := t.Lost; p.P > 0 && t.Timeout > 0 {
			lines = append(lines, fmt.Sprintf("  - {id: %s, kind: lost_response, tool: %s, probability: %s}   # %d of %d timed out outside fault windows, less the slow share the latency predicts; 95%% [%s, %s]",
				ids.make(t.Name+"-lost"), yamlText(t.Name), num(p.P), p.K, p.N, num(p.Lo), num(p.Hi)))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("faults:   # windows first: the first fault that fails an attempt wins\n")
	b.WriteString(strings.Join(lines, "\n") + "\n")
}

func (s Scenario) writeRecovery(b *strings.Builder) {
	r := s.Retry
	b.WriteString("recovery:\n")
	fmt.Fprintf(b, "  # %s\n", r.Exhaust.Comment(r.MaxAttempts))
	exhausted := ""
	if r.Exhaust.OnExhausted != "" {
		exhausted = ", on_exhausted: " + r.Exhaust.OnExhausted
	}
	if r.Exhaust.GiveUp > 0 {
		exhausted += ", give_up: " + num(r.Exhaust.GiveUp)
	}
	if r.Gaps >= 5 {
		fmt.Fprintf(b, "  retry: {max_attempts: %d, initial: %s, multiplier: %s, max: %s, jitter: %s%s}   # %d first backoffs; initial 95%% [%s, %s]\n",
			r.MaxAttempts, dur(r.Initial), num(r.Multiplier), dur(r.Max), r.Jitter, exhausted, r.Gaps, dur(r.Initial*r.Gaps1()), dur(r.InitialHi))
	} else {
		fmt.Fprintf(b, "  retry: {max_attempts: %d%s}   # too few backoffs (%d) to fit; the default backoff\n", r.MaxAttempts, exhausted, r.Gaps)
	}
	fmt.Fprintf(b, "  inspect_before_retry: %t   # %s\n", s.Inspect, map[bool]string{true: "lookups were seen", false: "no lookup was seen"}[s.Inspect])
	if h := s.Humans; h != nil {
		fmt.Fprintf(b, "  humans:\n    reviewers: %d   # the most reviews at once\n", h.Reviewers)
		fmt.Fprintf(b, "    review_time: %s   # %s\n", distYAML(h.ReviewTime, true, ""), quality(h.ReviewTime))
		fmt.Fprintf(b, "    approve: %s   # %d of %d; 95%% [%s, %s]\n", num(h.Approve.P), h.Approve.K, h.Approve.N, num(h.Approve.Lo), num(h.Approve.Hi))
	}
}

// Gaps1 is the lower end of the initial backoff's interval relative to its estimate:
// the largest backoff itself, k/(k+1) of the estimate.
func (r RetryFit) Gaps1() float64 {
	if r.Jitter == "none" || r.Gaps == 0 {
		return 1
	}
	return float64(r.Gaps) / float64(r.Gaps+1)
}

// quality is the comment on a fitted distribution.
func quality(d Dist) string {
	if d.Family == Constant {
		return fmt.Sprintf("all %d equal", d.N)
	}
	var others []string
	for _, o := range d.Others {
		if !math.IsNaN(o.AIC) && !math.IsInf(o.AIC, 0) {
			others = append(others, fmt.Sprintf("%s %.1f", o.Family, o.AIC))
		}
	}
	q := fmt.Sprintf("AIC %.1f (%s); KS %.3f; n=%d", d.AIC, strings.Join(others, ", "), d.KS, d.N)
	for _, r := range d.Refused {
		q += "; " + r
	}
	return q
}

// yamlText writes a name (a tool's) as YAML text: bare when it is a plain word YAML reads
// as text, else double-quoted. Go's quoting escapes are a subset of YAML's double-quoted
// escapes, and a tool name holds no control character (scenarios.CheckToolName).
func yamlText(name string) string {
	if plainYAML(name) {
		return name
	}
	return strconv.Quote(name)
}

// plainYAML says whether name is letters, digits, _, - and dots, starts with a letter or _,
// and is none of the words YAML reads as a boolean or null.
func plainYAML(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	switch strings.ToLower(name) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		return false
	}
	return true
}

// faultIDs makes fault ids of the scenario format ([A-Za-z0-9_.-]+) from text: each other
// character becomes -, and an id already made gets -2, -3 … so ids stay unique.
type faultIDs map[string]bool

func (ids faultIDs) make(text string) string {
	var b strings.Builder
	for _, r := range text {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	base := b.String()
	if len(base) > 100 {
		base = base[:100]
	}
	id := base
	for k := 2; ids[id]; k++ {
		id = fmt.Sprintf("%s-%d", base, k)
	}
	ids[id] = true
	return id
}

// distYAML writes d in the scenario format; durations are seconds written with units.
func distYAML(d Dist, isDur bool, extra string) string {
	v := num
	if isDur {
		v = dur
	}
	switch d.Family {
	case Exponential:
		return fmt.Sprintf("{dist: exponential, mean: %s%s}", v(d.Mean), extra)
	case Uniform:
		return fmt.Sprintf("{dist: uniform, min: %s, max: %s%s}", v(math.Max(0, d.Min)), v(d.Max), extra)
	case Lognormal:
		return fmt.Sprintf("{dist: lognormal, median: %s, p95: %s%s}", v(d.Median), v(d.P95), extra)
	case Pareto:
		return fmt.Sprintf("{dist: pareto, min: %s, alpha: %s%s}", v(d.Min), num(d.Alpha), extra)
	}
	return fmt.Sprintf("{dist: constant, value: %s%s}", v(d.Value), extra)
}

// sig rounds x to 4 significant digits.
func sig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}

// num writes a plain number with 4 significant digits and no exponent (the format reads
// rates and numbers as digits with at most one dot).
func num(x float64) string { return strconv.FormatFloat(sig(x), 'f', -1, 64) }

// dur writes seconds as a duration with 4 significant digits (at least 1µs when > 0).
func dur(sec float64) string {
	if sec <= 0 || math.IsNaN(sec) {
		return "0s"
	}
	d := time.Duration(sig(sec) * 1e9)
	if d < time.Microsecond {
		d = time.Microsecond
	}
	return d.Round(time.Microsecond).String()
}

// perHour writes a rate per second as N/h.
func perHour(perSec float64) string { return num(perSec*3600) + "/h" }
