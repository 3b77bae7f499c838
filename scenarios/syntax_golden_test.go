package scenarios

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// syntaxGolden is what the value syntax makes of combinations of numbers and units: each
// duration as ParseDuration reads it and as the file format writes it back, each rate, each
// --set argument's path, each expectation with the measured values it holds for.
const syntaxGolden = "testdata/syntax.golden"

var (
	syntaxNumbers = []string{"", "0", "1", "1.5", ".5", "5.", ".", "1..2", "-1", "-0", "+1", "1e3", "0x10", "1_000", "007",
		"9223372036854775807", "9223372036", "106751", "106752", "2562047", "2562048", "0.0000000001"}
	syntaxUnits = []string{"", "ns", "us", "µs", "μs", "ms", "s", "m", "h", "d", "x", "S", "D", "1", "h30m", "d12h", "m0.5s", "s ", " s", "d1ns"}
	syntaxPers  = []string{"s", "m", "h", "d", "24h", "1.5d", "0s", "-1h", "", "x", " h", "2", "1ns"}
	syntaxPaths = []string{"a", "a.b", "tools.x.timeout", "faults[0].for", "faults[9].for", "faults[999999999]", "faults[1000000000]",
		"faults[-1]", "faults[01]", "faults[]", "faults[0]x", "faults[0][1]", "a..b", ".a", "a.", "a b", "A.B", "tools.a-b_c.timeout", "[0]", "faults[0", ""}
	syntaxChecks = []string{">= 0.95", "<=1.5", "== 0", "> 2", "< 2", ">=", "=> 1", "= 1", "between 1 and 2", "between 2 and 1",
		"between 1 and 1", "between 1 2", " >= 1 ", ">= 5m", ">= x", ">= NaN", ">= inf", "between 0 and 5m", "!= 1", "between1 and 2"}
	syntaxMeasured = []float64{math.NaN(), math.Inf(-1), -1, 0, 0.95, 1, 1.5, 2, 2.5, 300, math.Inf(1)}
)

// The value syntax reads as it did: run `go test ./scenarios -run TestSyntaxGolden -update`
// after a deliberate change, and read the diff.
func TestSyntaxGolden(t *testing.T) {
	var b strings.Builder
	b.WriteString("## durations: ParseDuration, then fmtDuration\n")
	for _, n := range syntaxNumbers {
		for _, u := range syntaxUnits {
			in := n + u
			d, err := ParseDuration(in)
			if err != nil {
				fmt.Fprintf(&b, "%q: %v\n", in, err)
				continue
			}
			fmt.Fprintf(&b, "%q: %d ns = %s\n", in, int64(d), fmtDuration(d))
		}
	}
	b.WriteString("## rates: ParseRate, per second\n")
	for _, n := range syntaxNumbers {
		for _, p := range syntaxPers {
			in := n + "/" + p
			r, err := ParseRate(in)
			if err != nil {
				fmt.Fprintf(&b, "%q: %v\n", in, err)
				continue
			}
			fmt.Fprintf(&b, "%q: %v\n", in, r.PerSecond)
		}
	}
	b.WriteString("## --set arguments: ParseSet\n")
	for _, p := range syntaxPaths {
		for _, in := range []string{p + "=1", p + " = 1", p} {
			o, err := ParseSet(in)
			if err != nil {
				fmt.Fprintf(&b, "%q: %v\n", in, err)
				continue
			}
			fmt.Fprintf(&b, "%q: path %q value %q, %s\n", in, o.Path, o.Value, o.label())
		}
	}
	b.WriteString("## expectations: ParseExpectation, then Holds for each measured value\n")
	for _, m := range []string{"completion_rate", "makespan"} {
		for _, c := range syntaxChecks {
			e, bad := ParseExpectation(m, c)
			if bad != "" {
				fmt.Fprintf(&b, "%s %q: %s\n", m, c, bad)
				continue
			}
			fmt.Fprintf(&b, "%s %q: %s = %s, holds for", m, c, e.String(), e.Canonical())
			for _, x := range syntaxMeasured {
				if e.Holds(x) {
					fmt.Fprintf(&b, " %v", x)
				}
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("## durations the file format writes: fmtDuration\n")
	for _, d := range []time.Duration{0, 1, 999, time.Microsecond, 1500 * time.Microsecond, time.Second, 90 * time.Second,
		time.Hour, 90 * time.Minute, 24 * time.Hour, 36 * time.Hour, 48 * time.Hour, 30 * 24 * time.Hour, -24 * time.Hour, -time.Minute, math.MaxInt64, math.MinInt64} {
		fmt.Fprintf(&b, "%d: %s\n", int64(d), fmtDuration(d))
	}
	checkGolden(t, syntaxGolden, "TestSyntaxGolden", b.String(), "")
}
