package scenarios

import "testing"

// The lookups per attempt of the size model, worked out: an operation of constant latency
// L that outlives its timeout T runs on for L·slowdown − T, looked up once per interval I
// and once more, at most max times, each lookup and its answer two events:
// 2·min(max, (L·slowdown − T)/I + 1).
func TestLookupsPerAttempt(t *testing.T) {
	const base = `name: t
tools:
  svc: {latency: {dist: constant, value: 100s}, timeout: 10s}
recovery:
  inspect_before_retry: true
  inspection: {interval: 10s, max: 60}
`
	for _, c := range []struct {
		sets []string
		want float64
	}{
		{nil, 2 * (90.0/10 + 1)},                       // 20: the slowest service beyond the timeout
		{[]string{"recovery.inspection.max=5"}, 2 * 5}, // capped by max
		{[]string{"recovery.inspection.interval=30s"}, 2 * (90.0/30 + 1)},
		{[]string{`faults=[{kind: brownout, tool: svc, at: 1m, for: 1m, slowdown: 3}]`}, 2 * (290.0/10 + 1)}, // 60: slowed three times
		{[]string{"recovery.inspect_before_retry=false"}, 0},
	} {
		s, err := Parse("t.yaml", []byte(base), c.sets)
		if err != nil {
			t.Fatal(err)
		}
		if got := EstimateEvents(s).Lookups; got != c.want {
			t.Errorf("%v: %v lookup events per attempt, want %v", c.sets, got, c.want)
		}
	}
}
