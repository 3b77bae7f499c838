//go:build duckdb_arrow

package reports

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
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
				Name    string `xml:"name,attr"`
				Line    int    `xml:"line,attr"`
				Failure *struct {
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
	if first.Name != "completion_rate >= 0.95" || first.Line != 12 || first.Failure == nil ||
		!strings.Contains(first.Failure.Message, "measured 0.9000") {
		t.Errorf("first case: %+v; want the expectation as name, line 12 and the measured value in the failure", first)
	}
}
