// Package render turns a fault-suite report (runtime.Report) into what
// people read: the text summary that go test -v and agentidem-gen report
// print, one self-contained HTML page with a timeline of every scenario, and
// JUnit XML for CI systems.
//
// All three are pure functions of the report: the same report gives the same
// bytes, and a report read back from its JSON renders exactly like the report
// that wrote it. Everything that comes from a trace (tool arguments, results,
// errors, identities, scenario names) is data, never markup: the HTML is
// built with html/template, carries a Content-Security-Policy that forbids
// every network request and every script but its own, and the XML is built
// with encoding/xml.
//
// Render a saved report:
//
//	rep, err := runtime.ReadReport("report.json")
//	if err != nil {
//		return err
//	}
//	fmt.Println(render.Text(rep))
//	f, _ := os.Create("report.html")
//	defer f.Close()
//	return render.HTML(f, rep)
//
// or, from the command line:
//
//	agentidem-gen report --html report.html --junit report.xml report.json
package render
