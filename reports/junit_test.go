//go:build duckdb_arrow

package reports

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/scenarios"
)

// The JUnit file must parse as XML and carry, per suite and in total, the counts CI systems
// show: here 6 cases, 2 failures (one expectation, one undefined metric), 1 error (a
// scenario that did not run).
func TestWriteJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport(t).WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				SystemOut string `xml:"system-out"`
				Failure   *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, buf.String())
	}
	if doc.Tests != 6 || doc.Failures != 2 || doc.Errors != 1 || len(doc.Suites) != 3 {
		t.Fatalf("totals: %d tests, %d failures, %d errors, %d suites; want 6, 2, 1, 3\n%s", doc.Tests, doc.Failures, doc.Errors, len(doc.Suites), buf.String())
	}
	failures, errors := 0, 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
			if c.Error != nil {
				errors++
			}
		}
	}
	if failures != doc.Failures || errors != doc.Errors {
		t.Errorf("the totals (%d, %d) disagree with the <failure> and <error> elements (%d, %d)", doc.Failures, doc.Errors, failures, errors)
	}
	fleet := doc.Suites[0]
	if fleet.Name != "fleet" || fleet.Tests != 4 || fleet.Failures != 2 {
		t.Errorf("suite fleet: %s with %d tests, %d failures; want fleet, 4, 2", fleet.Name, fleet.Tests, fleet.Failures)
	}
	first := fleet.Cases[0]
	if first.Name != "completion_rate >= 0.95" || !strings.HasPrefix(first.SystemOut, "at fleet.yaml:12\n") || first.Failure == nil ||
		!strings.Contains(first.Failure.Message, "measured 0.9000") {
		t.Errorf("first case: %+v; want the expectation as name, line 12 and the measured value in the failure", first)
	}
}

// junitSchema reads testdata/junit-schema.txt: element -> allowed attributes and children.
func junitSchema(t *testing.T) (attrs, children map[string]map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("testdata/junit-schema.txt")
	if err != nil {
		t.Fatal(err)
	}
	attrs, children = map[string]map[string]bool{}, map[string]map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		elem, rest, _ := strings.Cut(line, " attrs:")
		a, c, _ := strings.Cut(rest, "children:")
		attrs[elem], children[elem] = map[string]bool{}, map[string]bool{}
		for _, f := range strings.Fields(a) {
			attrs[elem][f] = true
		}
		for _, f := range strings.Fields(c) {
			children[elem][f] = true
		}
	}
	return attrs, children
}

// Every element and attribute of the JUnit file must be in the common schema, which Jenkins
// enforces: it rejects `skipped` on <testsuites> and `file`/`line` on <testcase>.
func TestJUnitConformsToTheCommonSchema(t *testing.T) {
	attrs, children := junitSchema(t)
	var buf bytes.Buffer
	if err := sampleReport(t).WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&buf)
	var stack []string
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			if _, ok := attrs[name]; !ok {
				t.Errorf("<%s> is not an element of the JUnit schema", name)
			}
			if len(stack) == 0 {
				root = name
			} else if parent := stack[len(stack)-1]; !children[parent][name] {
				t.Errorf("<%s> may not hold <%s>", parent, name)
			}
			for _, a := range el.Attr {
				if !attrs[name][a.Name.Local] {
					t.Errorf("<%s> has attribute %q, which the JUnit schema does not allow", name, a.Name.Local)
				}
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if root != "testsuites" {
		t.Errorf("root element <%s>, want <testsuites>", root)
	}
}

// A case is named as the expectation is written, with its units: `<= 25m`, not `<= 1500`;
// where it is written goes to <system-out>.
func TestJUnitNamesKeepTheUnitsWritten(t *testing.T) {
	e := expectation(t, "p95_recovery_time", "<=  25m")
	e.Line = 7
	sum := Summary{Scenario: "fleet", Seed: 1, Metrics: map[string]float64{"p95_recovery_time": 1200}}
	r := CheckReport{Scenarios: []ScenarioCheck{{Scenario: "fleet", Source: "fleet.yaml", Seed: 1, Seeds: 1,
		Expectations: CheckExpectations(sum, []scenarios.Expectation{e})}}}
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name      string `xml:"name,attr"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Suites[0].Cases[0]
	if c.Name != "p95_recovery_time <= 25m" {
		t.Errorf("case name %q, want %q", c.Name, "p95_recovery_time <= 25m")
	}
	if !strings.HasPrefix(c.SystemOut, "at fleet.yaml:7\n") {
		t.Errorf("system-out %q does not begin with the expectation's file:line", c.SystemOut)
	}
}
