package scenarios

// The rule of every distribution family lives here, in distFamilies: its parameters and the
// relations between them. The decoder (with the file's text and line) and Validate (on a
// Scenario built in Go) both report the problems Dist.problems finds; the JSON Schema lists
// the parameters.

// distFamily is one distribution family: its parameters, in the order they are written, and
// the rules on their values beyond each being >= 0.
type distFamily struct {
	kind   DistKind
	params []string
	rules  []distRule
}

// distRule says param must be above 0 (other ""), above other, or (orEqual) at least other.
type distRule struct {
	param, other string
	orEqual      bool
}

var distFamilies = []distFamily{
	{kind: DistConstant, params: []string{"value"}},
	{kind: DistExponential, params: []string{"mean"}, rules: []distRule{{param: "mean"}}},
	{kind: DistUniform, params: []string{"min", "max"}, rules: []distRule{{param: "max", other: "min", orEqual: true}}},
	{kind: DistLognormal, params: []string{"median", "p95"}, rules: []distRule{{param: "median"}, {param: "p95", other: "median"}}},
	{kind: DistPareto, params: []string{"min", "alpha"}, rules: []distRule{{param: "min"}, {param: "alpha"}}},
}

// distKinds is every family's name, in table order.
var distKinds = func() []string {
	names := make([]string, len(distFamilies))
	for i, f := range distFamilies {
		names[i] = string(f.kind)
	}
	return names
}()

func familyOf(k DistKind) *distFamily {
	for i := range distFamilies {
		if distFamilies[i].kind == k {
			return &distFamilies[i]
		}
	}
	return nil
}

// distParams lists the parameters of a distribution family, in the order they are written;
// nil for a name that is not a family.
func distParams(k DistKind) []string {
	if f := familyOf(k); f != nil {
		return f.params
	}
	return nil
}

// param is the value of the parameter named p.
func (d Dist) param(p string) float64 {
	switch p {
	case "value":
		return d.Value
	case "mean":
		return d.Mean
	case "min":
		return d.Min
	case "max":
		return d.Max
	case "median":
		return d.Median
	case "p95":
		return d.P95
	case "alpha":
		return d.Alpha
	}
	return 0
}

// problems are the rules of d's family that d breaks, in the family's order.
func (d Dist) problems() []distRule {
	f := familyOf(d.Kind)
	if f == nil {
		return nil
	}
	var broken []distRule
	for _, r := range f.rules {
		x := d.param(r.param)
		var ok bool
		switch {
		case r.other == "":
			ok = x > 0
		case r.orEqual:
			ok = x >= d.param(r.other)
		default:
			ok = x > d.param(r.other)
		}
		if !ok {
			broken = append(broken, r)
		}
	}
	return broken
}

// fileMsg is the problem in the decoder's words, with the parameters as the file spells them.
func (r distRule) fileMsg(shown func(p string) string) string {
	switch {
	case r.other == "":
		return r.param + " " + shown(r.param) + " is not positive; want " + r.param + " > 0"
	case r.orEqual:
		return r.param + " " + shown(r.param) + " is below " + r.other + " " + shown(r.other) + "; want " + r.param + " >= " + r.other
	default:
		return r.param + " " + shown(r.param) + " is not above " + r.other + " " + shown(r.other) + "; want " + r.param + " > " + r.other
	}
}

// valueMsg is the problem in Validate's words (it is reported at the parameter's key).
func (r distRule) valueMsg(shown func(p string) string) string {
	switch {
	case r.other == "":
		return shown(r.param) + "; want > 0"
	case r.orEqual:
		return shown(r.param) + " is below " + r.other + " " + shown(r.other)
	default:
		return shown(r.param) + " is not above " + r.other + " " + shown(r.other)
	}
}

// set sets the parameter named p.
func (d *Dist) set(p string, x float64) {
	switch p {
	case "value":
		d.Value = x
	case "mean":
		d.Mean = x
	case "min":
		d.Min = x
	case "max":
		d.Max = x
	case "median":
		d.Median = x
	case "p95":
		d.P95 = x
	case "alpha":
		d.Alpha = x
	}
}
