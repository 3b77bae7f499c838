//go:build duckdb_arrow

package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML that CI systems display (GitHub test reporters, GitLab, Jenkins): one
// <testsuite> per scenario and one <testcase> per expectation (and per baseline metric), a
// <failure> for each that does not hold and an <error> for each that could not be evaluated
// because the scenario did not run.
//
// Only the elements and attributes of the common JUnit schema (Jenkins' junit-10.xsd, which
// GitLab and the GitHub reporters also read) are written: no totals of skipped cases on
// <testsuites>, and no file or line attributes. Where an expectation is written goes to
// the suite's properties (source) and to each case's <system-out> (file:line).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func (r CheckReport) WriteJUnit(w io.Writer) error {
	all := junitSuites{Name: "mayday check"}
	var total float64
	for _, s := range r.Scenarios {
		suite := junitSuite{
			Name: s.Scenario,
			Time: junitSeconds(s.WallSeconds),
			Properties: []junitProperty{
				{"source", s.Source},
				{"seed", fmt.Sprint(s.Seed)},
				{"seeds", fmt.Sprint(s.Seeds)},
			},
		}
		if s.Digest != "" {
			suite.Properties = append(suite.Properties, junitProperty{"digest", s.Digest})
		}
		if s.RunFolder != "" {
			suite.Properties = append(suite.Properties, junitProperty{"run_folder", s.RunFolder})
		}
		cases := s.cases()
		for _, c := range cases {
			jc := junitCase{Name: c.name, Classname: "mayday.check." + s.Scenario, Time: "0", SystemOut: c.detail}
			if c.line > 0 {
				jc.SystemOut = strings.TrimSpace(fmt.Sprintf("at %s:%d\n%s", s.Source, c.line, c.detail))
			}
			switch {
			case c.err != "":
				jc.Error = &junitProblem{Message: c.err, Type: "run", Text: c.err}
				suite.Errors++
			case c.failure != "":
				where := fileLine(s.Source, c.line)
				jc.Failure = &junitProblem{Message: c.failure, Type: "expectation", Text: c.failure + "\n" + where}
				if strings.HasPrefix(c.name, "baseline ") {
					jc.Failure.Type = "baseline"
				}
				suite.Failures++
			case c.skipped != "":
				jc.Skipped = &junitProblem{Message: c.skipped}
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, jc)
		}
		suite.Tests = len(cases)
		all.Tests += suite.Tests
		all.Failures += suite.Failures
		all.Errors += suite.Errors
		total += s.WallSeconds
		all.Suites = append(all.Suites, suite)
	}
	all.Time = junitSeconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitSeconds(s float64) string { return fmt.Sprintf("%.3f", s) }
