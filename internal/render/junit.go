package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// JUnit writes reports as one JUnit XML document for CI systems: a
// testsuite per report, named after it, with a testcase per scenario, the
// baseline first. A scenario with error findings is a failure whose message
// is the first finding and whose text lists them all with their ops,
// identities, calls and replay line; an inconclusive scenario (its fault
// never fired) is skipped with the reason. Warnings, the fault and the
// replay line go to system-out.
func JUnit(w io.Writer, r *runtime.Report, more ...*runtime.Report) error {
	doc := junitSuites{Name: "agentidem"}
	for _, rep := range append([]*runtime.Report{r}, more...) {
		if rep == nil {
			return fmt.Errorf("render: nil report")
		}
		s := junitSuiteOf(rep)
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.seconds += s.seconds
	}
	doc.Time = strconv.FormatFloat(doc.seconds, 'f', 6, 64)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing junit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing junit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing junit report: %w", err)
	}
	return nil
}

func junitSuiteOf(r *runtime.Report) junitSuite {
	suite := junitSuite{
		seconds: r.Duration.Seconds(),
		Name:    r.Name,
		Time:    seconds(r.Duration),
		Props:   []junitProperty{{"verdict", Verdict(r)}, {"seed", strconv.FormatInt(r.Seed, 10)}, {"agent_runs", strconv.Itoa(r.AgentRuns)}},
	}
	if !r.StartedAt.IsZero() {
		suite.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	for i, res := range scenarios(r) {
		tc := junitCase{Name: res.Scenario, Classname: r.Name, Time: seconds(res.Duration)}
		status := scenarioStatus(res, i == 0 && res == r.Baseline)
		var errs, others []runtime.Finding
		for _, f := range res.Findings {
			if f.Severity == runtime.SeverityError {
				errs = append(errs, f)
			} else {
				others = append(others, f)
			}
		}
		switch {
		case len(errs) > 0 || status == statusFailed:
			tc.Failure = failureOf(res, errs)
			suite.Failures++
		case status == statusInconclusive:
			msg := "the planned fault never fired, so this scenario proved nothing"
			if fl := faultLabel(res); fl != "" {
				msg = "fault " + fl + " never fired"
				if res.Trace != nil && res.Trace.FaultNote != "" {
					msg += ": " + res.Trace.FaultNote
				}
			}
			tc.Skipped = &junitSkipped{Message: msg}
			suite.Skipped++
		}
		var out []string
		if fl := faultLabel(res); fl != "" {
			fired := "fired"
			if !res.FaultFired {
				fired = "did not fire"
			}
			out = append(out, "fault: "+fl+" ("+fired+")")
		}
		if res.Error != "" {
			out = append(out, "agent error: "+res.Error)
		}
		for _, f := range others {
			out = append(out, string(f.Severity)+" "+f.Code+": "+f.Message)
		}
		if res.Replay != "" {
			out = append(out, "replay: "+res.Replay)
		}
		if l := legendLine(res); l != "" {
			out = append(out, l)
		}
		if len(out) > 0 {
			tc.SystemOut = &junitText{Text: strings.Join(out, "\n")}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	suite.Tests = len(suite.Cases)
	return suite
}

func failureOf(res *runtime.Result, errs []runtime.Finding) *junitFailure {
	if len(errs) == 0 {
		msg := "the agent failed without any fault"
		if res.Error != "" {
			msg += ": " + res.Error
		}
		return &junitFailure{Type: runtime.CodeBaselineFailed, Message: msg, Text: msg}
	}
	first := errs[0]
	msg := first.Code + ": " + first.Message
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	var b strings.Builder
	for i, f := range errs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s] %s\n", f.Code, f.Message)
		if len(f.Ops) > 0 {
			fmt.Fprintf(&b, "  op: %s\n", strings.Join(f.Ops, ", "))
		}
		if len(f.Identities) > 0 {
			fmt.Fprintf(&b, "  identity: %s\n", strings.Join(f.Identities, ", "))
		}
		if len(f.Calls) > 0 {
			fmt.Fprintf(&b, "  calls: %s\n", strings.Join(f.Calls, ", "))
		}
		if f.Replay != "" {
			fmt.Fprintf(&b, "  replay: %s\n", f.Replay)
		}
		if f.Stack != "" {
			fmt.Fprintf(&b, "%s\n", strings.TrimRight(f.Stack, "\n"))
		}
	}
	return &junitFailure{Type: first.Code, Message: msg, Text: strings.TrimRight(b.String(), "\n")}
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
	seconds  float64
}

type junitSuite struct {
	Name      string          `xml:"name,attr"`
	Tests     int             `xml:"tests,attr"`
	Failures  int             `xml:"failures,attr"`
	Errors    int             `xml:"errors,attr"`
	Skipped   int             `xml:"skipped,attr"`
	Time      string          `xml:"time,attr"`
	Timestamp string          `xml:"timestamp,attr,omitempty"`
	Props     []junitProperty `xml:"properties>property"`
	Cases     []junitCase     `xml:"testcase"`
	seconds   float64
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitText struct {
	Text string `xml:",chardata"`
}
