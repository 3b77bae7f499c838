package sim

import (
	"math"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
)

// validationSink counts completed root investigations by truth and verdict.
type validationSink struct {
	record.Discard
	right, wrong             int // completed roots, truly valid or not
	rightPassed, wrongPassed int // of those, validated
	mismatch                 int // validated != truly_valid
}

func (v *validationSink) Investigation(r *record.Investigation) {
	if r.ParentID != 0 || r.FinalState != "completed" {
		return
	}
	if r.TrulyValid {
		v.right++
		if r.Validated {
			v.rightPassed++
		}
	} else {
		v.wrong++
		if r.Validated {
			v.wrongPassed++
		}
	}
	if r.TrulyValid != r.Validated {
		v.mismatch++
	}
}

// The independent validator rejects a right result with probability false_reject (r) and
// passes a wrong one with false_accept (a), so among R right and W wrong completed results
// the passes are Binomial(R, 1−r) + Binomial(W, a), and validation_pass_rate has the closed
// form E = ((1−r)·R + a·W) / (R + W). Each count must lie within 5 standard deviations of
// its mean (a false failure has probability below 1e-6); a validator that copied the
// truth would pass all R and none of the W and miss by far more.
func TestIndependentValidatorErrorRates(t *testing.T) {
	const fa, fr = 0.3, 0.1
	s := testScenario()
	s.Workload.Investigations = 4000
	s.Workload.Behaviour.ValidationMiss = 0.5 // the agent's own check lets wrong results through
	s.Workload.Behaviour.InvalidOutput = 0.3
	s.Workload.Behaviour.ReviseSuccess = 0.5
	var off validationSink
	run(t, s, 7, &off)
	if off.mismatch != 0 || off.wrong == 0 {
		t.Fatalf("without error rates validated must equal truly_valid: %+v (want some wrong results)", off)
	}
	s.Validation.Independent.FalseAccept, s.Validation.Independent.FalseReject = fa, fr
	var on validationSink
	run(t, s, 7, &on)
	if on.right != off.right || on.wrong != off.wrong {
		t.Fatalf("the validator's draws moved the simulation: %+v vs %+v", on, off)
	}
	within := func(name string, k, n int, p float64) {
		mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
		if math.Abs(float64(k)-mean) > 5*sd {
			t.Errorf("%s: %d of %d, want %.1f ± %.1f (5 sd)", name, k, n, mean, 5*sd)
		}
	}
	within("right results passed", on.rightPassed, on.right, 1-fr)
	within("wrong results passed", on.wrongPassed, on.wrong, fa)
	if on.wrong < 200 || on.right < 200 {
		t.Fatalf("too few results for the test: %+v", on)
	}
	t.Logf("without errors %+v; with false_accept %v, false_reject %v: %+v", off, fa, fr, on)
	n := float64(on.right + on.wrong)
	rate := float64(on.rightPassed+on.wrongPassed) / n
	want := ((1-fr)*float64(on.right) + fa*float64(on.wrong)) / n
	sd := math.Sqrt((float64(on.right)*fr*(1-fr) + float64(on.wrong)*fa*(1-fa))) / n
	if math.Abs(rate-want) > 5*sd {
		t.Errorf("validation_pass_rate %.4f, closed form %.4f ± %.4f", rate, want, 5*sd)
	}
}
