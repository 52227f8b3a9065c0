// Command agentidem-gen writes tracing wrappers for tool functions annotated
// with //agentidem:read and //agentidem:write, checks that they are up to
// date, and renders saved fault-suite reports.
//
// Add it to your module as a tool, then put the go:generate line in a file
// of each package with annotated tools:
//
//	go get -tool github.com/agentidem/agentidem-go/cmd/agentidem-gen
//
//	//go:generate go tool agentidem-gen
//
// Usage:
//
//	agentidem-gen [generate] [packages]   write agentidem_gen.go in each package (default ".")
//	agentidem-gen check [packages]        exit 1 naming every stale generated file
//	agentidem-gen report [--html F.html|DIR] [--junit F] FILE.json|DIR...
//	                                      print saved reports; write HTML pages and JUnit XML
//
// Exit status: 0 on success, 1 for errors in the input (all of them are
// listed), 2 for usage errors.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
