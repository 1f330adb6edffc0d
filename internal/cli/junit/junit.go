package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"
)

// Result is the outcome of one test case of `kubectl hygiene test`.
type Result struct {
	// File is the *_test.yaml file of the case.
	File string
	// Name is the case's name.
	Name string
	// Diff is the decisions' (-want +got) diff; empty when the case passed.
	Diff string
	// Time is how long the case took.
	Time time.Duration
}

// The JUnit XML report (testsuites/testsuite/testcase/failure) that CI
// systems read, as the Jenkins and Ant JUnit schemas define it: one
// testsuite per test file, one testcase per case.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// seconds formats d as JUnit's time: decimal seconds.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// Write writes the results as a JUnit XML report, the files in the
// order of the results.
func Write(w io.Writer, results []Result) error {
	report := junitSuites{Name: "kubectl hygiene test"}
	var total time.Duration
	index := map[string]int{}
	suiteTime := map[string]time.Duration{}
	for _, r := range results {
		i, ok := index[r.File]
		if !ok {
			i = len(report.Suites)
			index[r.File] = i
			report.Suites = append(report.Suites, junitSuite{Name: r.File})
		}
		s := &report.Suites[i]
		c := junitCase{Name: r.Name, Classname: r.File, Time: seconds(r.Time)}
		if r.Diff != "" {
			c.Failure = &junitFailure{Message: "decisions mismatch (-want +got)", Type: "DecisionsMismatch", Text: r.Diff}
			s.Failures++
			report.Failures++
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
		report.Tests++
		suiteTime[r.File] += r.Time
		total += r.Time
	}
	for i := range report.Suites {
		report.Suites[i].Time = seconds(suiteTime[report.Suites[i].Name])
	}
	report.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(report); err != nil {
		return fmt.Errorf("encoding the JUnit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
