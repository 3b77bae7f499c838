package scenarios

import (
	"fmt"
	"regexp"
	"strings"
)

// The key tables of docs/scenarios.md are generated from the declarations: a table follows
// a line <!-- keys PATH --> (PATH as --set spells it: recovery.retry, tools.T) and ends at
// <!-- end keys -->. TestKeyTablesAreCurrent fails when one is stale; go test ./scenarios
// -run KeyTables -update rewrites them.

// KeyTable is the Markdown table of the keys of the block at path (recovery.breaker;
// "" for the top level): key, type, default and meaning, in the order of the format.
func KeyTable(path string) (string, error) {
	sch := rootSchema
	if path != "" {
		sch = resolve(rootSchema, keySegments(path))
	}
	if sch != nil && sch.seq {
		sch = sch.elem // a list's table is its items' keys (faults)
	}
	if sch == nil || len(sch.keys) == 0 {
		return "", fmt.Errorf("scenarios: %q is not a block of keys", path)
	}
	var b strings.Builder
	b.WriteString("| key | type | default | meaning |\n|---|---|---|---|\n")
	for _, k := range sch.keys {
		sub := sch.sub[k]
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k, sub.typeText(), sub.defaultCell(), cell(sub.doc))
	}
	return b.String(), nil
}

// cell escapes a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// typeText says what a value of sch is, for a key table.
func (sch *schema) typeText() string {
	if sch.rangeOf != nil {
		return sch.rangeOf.typeText() + ", or a range {min, max} of such values"
	}
	switch sch.kind {
	case kindInt:
		if sch.max > 0 {
			return "whole number, " + bound(sch.min) + " to " + bound(sch.max)
		}
		return "whole number ≥ " + bound(sch.min)
	case kindNumber:
		if sch.signed {
			return "number"
		}
		if sch.max > 0 && !sch.above {
			return "number, " + fmtNumber(sch.min) + " to " + fmtNumber(sch.max)
		}
		if sch.above {
			return "number > " + fmtNumber(sch.min)
		}
		return "number ≥ " + fmtNumber(sch.min)
	case kindProb:
		if sch.above {
			return "probability > 0 (a number in (0, 1])"
		}
		return "probability"
	case kindDuration:
		if sch.above {
			return "duration > 0"
		}
		return "duration ≥ 0"
	case kindBool:
		return "boolean"
	case kindEnum:
		words := make([]string, len(sch.enum))
		for i, w := range sch.enum {
			words[i] = "`" + w + "`"
		}
		return orList(words)
	case kindText:
		if sch.pattern != "" {
			return "text, `" + strings.Trim(sch.pattern, "^$") + "`"
		}
		return "text"
	case kindRate:
		return "rate"
	case kindCompute:
		return "number ≥ 0, or a duration"
	case kindDurDist:
		return "duration distribution"
	case kindCountDist:
		if sch.min > 0 {
			return "count distribution, ≥ " + fmtNumber(sch.min)
		}
		return "count distribution"
	case kindDurDistByClass:
		return "duration distribution, or one per failure class"
	case kindProbByClass:
		return "probability, or one per failure class"
	case kindList:
		return "list"
	case kindCheck:
		return "check"
	}
	if sch.elem != nil {
		return "mapping of " + sch.entity + " → " + sch.elem.typeText()
	}
	return "mapping"
}

var powerOfTwo = regexp.MustCompile(`^1(0*)$`)

// bound writes a whole-number bound, powers of two as 2ⁿ.
func bound(x float64) string {
	n := int64(x)
	if n >= 1<<16 && n&(n-1) == 0 {
		e := 0
		for ; n > 1; n >>= 1 {
			e++
		}
		sup := strings.NewReplacer("0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶", "7", "⁷", "8", "⁸", "9", "⁹")
		return "2" + sup.Replace(fmt.Sprint(e))
	}
	return fmtNumber(x)
}

// defaultCell is a key's default for a key table.
func (sch *schema) defaultCell() string {
	if sch.shown != "" && (strings.HasPrefix(sch.shown, "{") || strings.Trim(sch.shown, "0123456789.") == "") {
		return "`" + sch.shown + "`" // a value, as a file writes it
	}
	if sch.shown != "" {
		return sch.shown
	}
	if sch.need {
		return "required"
	}
	if d := sch.defaultText(); strings.HasPrefix(d, "constant ") {
		return d
	} else if d != "" {
		return "`" + d + "`"
	}
	if sch.typ != nil && sch.ptr {
		return "off when absent"
	}
	if sch.typ != nil {
		return "see below"
	}
	switch sch.kind {
	case kindInt, kindNumber, kindProb, kindDuration, kindCompute:
		return "`0`"
	case kindBool:
		return "`false`"
	}
	return "none"
}

// DefaultsTable is the Markdown table of every key's default, by dotted path, in the order
// of the format (blocks of declared keys are walked; a tool's keys are under tools.T).
func DefaultsTable() string {
	var b strings.Builder
	b.WriteString("| key | default |\n|---|---|\n")
	var walk func(sch *schema, path string)
	walk = func(sch *schema, path string) {
		for _, k := range sch.keys {
			sub, p := sch.sub[k], join(path, k)
			if c := sub.defaultCell(); c != "see below" {
				fmt.Fprintf(&b, "| `%s` | %s |\n", p, c)
			}
			if sub.typ != nil {
				walk(sub, p)
			} else if sub.elem == toolSchema {
				walk(toolSchema, p+".T")
			}
			for _, kk := range sub.keys { // keys decoded by hand that say their default
				if sub.typ == nil && sub.sub[kk].shown != "" {
					fmt.Fprintf(&b, "| `%s` | %s |\n", join(p, kk), sub.sub[kk].defaultCell())
				}
			}
		}
	}
	walk(rootSchema, "")
	return b.String()
}

// FaultKindTable is the Markdown table of the registered fault kinds: each kind, the keys
// it takes besides id and kind (a starred key is required) and what it does.
func FaultKindTable() string {
	var b strings.Builder
	b.WriteString("| kind | keys | what happens |\n|---|---|---|\n")
	for _, r := range faultTable {
		keys := make([]string, 0, len(r.keys()))
		for _, k := range r.keys() {
			star := ""
			if contains(r.Required, k) {
				star = "*"
			}
			keys = append(keys, "`"+k+"`"+star)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Kind, strings.Join(keys, ", "), cell(r.Doc))
	}
	return b.String()
}

var faultKindsMarker = regexp.MustCompile(`(?m)^<!-- fault kinds -->\n(?s:.*?)<!-- end fault kinds -->$`)

var defaultsMarker = regexp.MustCompile(`(?m)^<!-- defaults -->\n(?s:.*?)<!-- end defaults -->$`)

var keysMarker = regexp.MustCompile(`(?m)^<!-- keys ([a-zA-Z0-9_.]*) -->\n(?s:.*?)<!-- end keys -->$`)

// renderKeyTables rewrites every generated table of a Markdown document.
func renderKeyTables(doc string) (string, error) {
	var err error
	out := keysMarker.ReplaceAllStringFunc(doc, func(m string) string {
		path := keysMarker.FindStringSubmatch(m)[1]
		t, e := KeyTable(path)
		if e != nil {
			err = e
			return m
		}
		return "<!-- keys " + path + " -->\n" + t + "<!-- end keys -->"
	})
	out = defaultsMarker.ReplaceAllLiteralString(out, "<!-- defaults -->\n"+DefaultsTable()+"<!-- end defaults -->")
	out = faultKindsMarker.ReplaceAllLiteralString(out, "<!-- fault kinds -->\n"+FaultKindTable()+"<!-- end fault kinds -->")
	return out, err
}
