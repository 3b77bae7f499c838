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

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
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
	File       string          `xml:"file,attr,omitempty"`
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
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
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
		file := ""
		if !strings.HasPrefix(s.Source, "embedded:") {
			file = s.Source
			suite.File = file
		}
		cases := s.cases()
		for _, c := range cases {
			jc := junitCase{Name: c.name, Classname: "mayday.check." + s.Scenario, Time: "0", File: file, SystemOut: c.detail}
			if file != "" {
				jc.Line = c.line
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
		all.Skipped += suite.Skipped
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
