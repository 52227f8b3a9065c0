package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/internal/reportfile"
	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/spf13/cobra"
)

// reportConfig is the report subcommand's flags.
type reportConfig struct {
	html  string
	junit string
	merge string
	quiet bool
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var cfg reportConfig
	cmd := &cobra.Command{
		Use:                   "report [--html out.html|pages/] [--junit out.xml] [--merge out.json] [-q] FILE.json|DIR...",
		DisableFlagsInUseLine: true,
		Short:                 "Print saved fault-suite reports; write them as HTML or JUnit XML",
		Long: `report reads fault-suite reports saved as JSON (testkit writes one per test
to $AGENTIDEM_REPORT_DIR/<package>/<Test>.json; a directory stands for the
.json files in it and below it) and prints each one's readable summary: the verdict, every scenario
with its fault, and every finding with its op, identity, calls and replay
line. A .json file in a directory that does not claim to be a report (not a
JSON object, or no schema_version: a golden trace of testkit.Golden,
another tool's file) is skipped with a note; one named by itself, or one
that claims to be a report and does not read, is an error.

--html writes each report as one self-contained HTML page (no network, no
external file): per scenario a timeline of the calls of each invocation,
parallel batches shaded, injected faults and findings marked, details of
every call on click. --html names one page's file when it ends in .html,
and a directory otherwise, made as needed, with a trailing / or without:
each report gets its page there, at the path of its JSON file below the DIR
it was found in (a FILE.json given by itself: its name). So
--html pages reports/ writes pages/agent/TestRefundAgent.html however many
reports reports/ holds, --html pages FILE.json writes pages/FILE.html, and
--html report.html FILE.json writes that file. A name ending in .html for a
DIR or several reports, or a name without it that is a file already, is a
usage error.
--junit writes JUnit XML, one testsuite per report and one testcase per
scenario, for CI systems.

--merge joins the reports of the shards of one test (AGENTIDEM_SHARD=i/n or
Bazel's test sharding split its schedule exploration) into the one report an
unsharded run would have written, saves it as JSON and renders only it. Every
shard of the split must be given.

On a terminal the steps are shown as they run and the summary is colored,
unless NO_COLOR is set; pipes and files get plain text. Exit status: 0 when
the reports were rendered (whatever their verdict), 1 when a report cannot be
read or an output cannot be written, 2 for usage errors.`,
		Example: `  AGENTIDEM_REPORT_DIR=reports go test ./agent/
  agentidem-gen report reports/agent/TestRefundAgent.json
  agentidem-gen report --html report.html reports/agent/TestRefundAgent.json
  agentidem-gen report --junit junit.xml --html pages/ reports/
  agentidem-gen report --merge TestAgent.json shard1/TestAgent.json shard2/TestAgent.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("report needs a FILE.json or a directory of them")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cfg, args, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&cfg.html, "html", "", "write the report as one self-contained HTML `file` when it ends in .html; any other name is a directory of pages, made as needed")
	cmd.Flags().StringVar(&cfg.junit, "junit", "", "write the reports as JUnit XML to `file`")
	cmd.Flags().StringVar(&cfg.merge, "merge", "", "merge the given shard reports of one test into one report, written as JSON to `file`")
	cmd.Flags().BoolVarP(&cfg.quiet, "quiet", "q", false, "do not print the summaries")
	return cmd
}

// reportFile is a report to read: its path, and the name of its HTML page
// in an --html directory (its path below the directory argument it was
// found in, or its file name when given by itself), without the extension.
// dir is the directory argument it was found in, empty for a file given by
// itself.
type reportFile struct {
	path, page, dir string
}

// reportFiles expands directories to the .json files in them and in their
// subdirectories (AGENTIDEM_REPORT_DIR keeps each package's reports in the
// package's directory below it), sorted; hidden directories are skipped.
func reportFiles(args []string) ([]reportFile, error) {
	var files []reportFile
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			// ReadReport says what is wrong
			files = append(files, reportFile{path: a, page: strings.TrimSuffix(filepath.Base(a), ".json")})
			continue
		}
		var found []reportFile
		err = filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != a && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if filepath.Ext(path) != ".json" || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			rel, err := filepath.Rel(a, path)
			if err != nil {
				return err
			}
			found = append(found, reportFile{path: path, page: strings.TrimSuffix(rel, ".json"), dir: a})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading reports: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("reading reports: no .json file in %s", a)
		}
		sort.Slice(found, func(i, j int) bool { return found[i].path < found[j].path })
		files = append(files, found...)
	}
	return files, nil
}

// runReport reads every report, then prints the summaries and writes the
// requested outputs. Nothing is written unless every report could be read.
func runReport(cfg reportConfig, args []string, stdout, stderr io.Writer) error {
	files, err := reportFiles(args)
	if err != nil {
		return err
	}
	out := render.StyleOf(stdout)
	steps := len(files)
	if cfg.html != "" {
		steps += len(files)
	}
	if cfg.junit != "" {
		steps++
	}
	if cfg.merge != "" {
		steps++
	}
	// Progress goes to stderr, and only when stdout is a live terminal:
	// piped output and CI logs stay plain.
	prog := render.NewProgress(stderr, render.Style{Live: out.Live && render.IsTerminal(stderr), Color: out.Color}, steps)
	reps := make([]*runtime.Report, 0, len(files))
	var read []reportFile
	var notes []string
	skipped := map[string]string{}
	for _, f := range files {
		prog.Step("reading " + f.path)
		rep, err := readValidReport(f.path)
		// A directory stands for the reports below it, but not every
		// .json file there need be one. Golden traces (testkit.Golden)
		// live in the packages' testdata directories, which a walk meets
		// when AGENTIDEM_REPORT_DIR is the module's root or a testdata
		// directory, or when the command is given a source tree; and
		// other tools may write JSON where the reports go. One such file
		// failed the whole directory, so a file found in a directory that
		// does not claim to be a report (not a JSON object, or no string
		// schema_version) is skipped with a note. A file that claims to
		// be a report but does not read, or is not JSON at all (a report
		// cut short), still fails, as does any file named by itself: that
		// one was meant to be rendered.
		var nr *reportfile.Error
		if err != nil && f.dir != "" && errors.As(err, &nr) && nr.Foreign {
			notes = append(notes, fmt.Sprintf("skipped %s: %s", f.path, nr.What))
			skipped[f.path] = nr.What
			if cfg.html != "" {
				prog.Drop(1) // its page
			}
			continue
		}
		if err != nil {
			prog.Done("")
			return err
		}
		reps = append(reps, rep)
		read = append(read, f)
	}
	if err := everyDirHasAReport(args, files, read, skipped); err != nil {
		prog.Done("")
		return err
	}
	files = read
	if err := refuseOverwrite(cfg, files); err != nil {
		prog.Done("")
		return err
	}
	var wrote []string
	if cfg.merge != "" {
		prog.Step("merging shards into " + cfg.merge)
		merged, err := runtime.MergeShards(reps...)
		if err != nil {
			prog.Done("")
			return err
		}
		n, err := writeAtomic(cfg.merge, merged.WriteJSON)
		if err != nil {
			prog.Done("")
			return err
		}
		wrote = append(wrote, fmt.Sprintf("wrote %s (%s, %d shards)", cfg.merge, size(n), len(reps)))
		reps, files = []*runtime.Report{merged}, []reportFile{{path: cfg.merge, page: strings.TrimSuffix(filepath.Base(cfg.merge), ".json")}}
	}
	if cfg.html != "" {
		targets, err := htmlTargets(cfg.html, files)
		if err != nil {
			prog.Done("")
			return err
		}
		for i, rep := range reps {
			prog.Step("rendering HTML to " + targets[i])
			n, err := writeAtomic(targets[i], func(w io.Writer) error { return render.HTML(w, rep) })
			if err != nil {
				prog.Done("")
				return err
			}
			wrote = append(wrote, fmt.Sprintf("wrote %s (%s)", targets[i], size(n)))
		}
	}
	if cfg.junit != "" {
		prog.Step("rendering JUnit XML to " + cfg.junit)
		n, err := writeAtomic(cfg.junit, func(w io.Writer) error { return render.JUnit(w, reps[0], reps[1:]...) })
		if err != nil {
			prog.Done("")
			return err
		}
		wrote = append(wrote, fmt.Sprintf("wrote %s (%s)", cfg.junit, size(n)))
	}
	prog.Done("")
	if !cfg.quiet {
		var opts []render.Option
		if out.Color {
			opts = append(opts, render.Color())
		}
		var unsafe []string
		for i, rep := range reps {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintln(stdout, render.Text(rep, opts...))
			if v := render.Verdict(rep); v != render.VerdictSafe {
				unsafe = append(unsafe, rep.Name+" ("+v+")")
			}
		}
		if len(reps) > 1 {
			fmt.Fprintf(stdout, "\nagentidem: %d reports, %d not safe", len(reps), len(unsafe))
			if len(unsafe) > 0 {
				fmt.Fprintf(stdout, ": %s", strings.Join(unsafe, ", "))
			}
			fmt.Fprintln(stdout)
		}
	}
	for _, s := range append(notes, wrote...) {
		fmt.Fprintf(stderr, "agentidem-gen: %s\n", s)
	}
	return nil
}

// everyDirHasAReport fails for a directory argument whose .json files were
// all skipped as not reports (skipped maps each to why), as for one with no
// .json file: the command was given nothing to render there.
func everyDirHasAReport(args []string, found, read []reportFile, skipped map[string]string) error {
	for _, a := range args {
		var first string
		n := 0
		for _, f := range found {
			if f.dir == a {
				if n == 0 {
					first = f.path
				}
				n++
			}
		}
		if n == 0 || slices.ContainsFunc(read, func(f reportFile) bool { return f.dir == a }) {
			continue
		}
		more := ""
		if n > 1 {
			more = fmt.Sprintf(", and %d more", n-1)
		}
		return fmt.Errorf("reading reports: no report in %s, only other JSON (%s: %s%s); give the directory testkit writes reports to (AGENTIDEM_REPORT_DIR)", a, first, skipped[first], more)
	}
	return nil
}

// readValidReport reads a saved report after checking it against the
// schema of its version, so that a file that is not a whole report is
// refused with what it lacks instead of being rendered as a failed suite.
func readValidReport(path string) (*runtime.Report, error) {
	rep, err := runtime.ReadReport(path) // names an unreadable file, one that is not a report, another version
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading report %s: %w", path, err)
	}
	if err := reportschema.ValidateJSON(b); err != nil {
		return nil, fmt.Errorf("reading report %s: not a whole report: %w; render a file that testkit.TestAgent or runtime.Run wrote (AGENTIDEM_REPORT_DIR)", path, err)
	}
	return rep, nil
}

// refuseOverwrite fails when an output (--html, --junit) is one of the
// reports read: rendering would destroy its own input.
func refuseOverwrite(cfg reportConfig, files []reportFile) error {
	outputs := map[string]string{}
	if cfg.html != "" {
		pages := files
		if cfg.merge != "" {
			// one page, of the merged report
			pages = []reportFile{{path: cfg.merge, page: strings.TrimSuffix(filepath.Base(cfg.merge), ".json")}}
		}
		targets, err := htmlTargets(cfg.html, pages)
		if err != nil {
			return err
		}
		for _, t := range targets {
			outputs[t] = "--html"
		}
	}
	if cfg.junit != "" {
		outputs[cfg.junit] = "--junit"
	}
	if cfg.merge != "" {
		outputs[cfg.merge] = "--merge"
	}
	for out, flag := range outputs {
		oi, err := os.Stat(out)
		if err != nil {
			continue // not there yet: it cannot be an input
		}
		for _, in := range files {
			if ii, err := os.Stat(in.path); err == nil && os.SameFile(oi, ii) {
				return usageError{fmt.Errorf("%s %s would write over the report %s, which it reads: refusing; give %s another file name", flag, out, in.path, flag)}
			}
		}
	}
	return nil
}

// htmlTargets names the HTML file of each report. --html names one page's
// file when it ends in .html, and a directory otherwise (htmlIsDir); each
// report then gets a page in it at the path its JSON file has below the
// directory it was found in (reports/billing/TestRefund.json gives
// pages/billing/TestRefund.html), and the directories are made.
//
// Whether pages/ is a directory must not depend on how many reports
// reports/ holds today: the documented `--html pages/ reports/` wrote
// pages/ as a file for one report (and failed on its trailing slash), and
// a CI job whose first run has one report would find its page somewhere
// else on the next.
func htmlTargets(html string, files []reportFile) ([]string, error) {
	dir, err := htmlIsDir(html, files)
	if err != nil {
		return nil, err
	}
	if !dir {
		return []string{html}, nil
	}
	seen := map[string]string{}
	targets := make([]string, len(files))
	for i, f := range files {
		target := filepath.Join(html, f.page+".html")
		if prev, ok := seen[target]; ok {
			return nil, usageError{fmt.Errorf("%s and %s would both be written to %s", prev, f.path, target)}
		}
		seen[target] = f.path
		targets[i] = target
	}
	for _, target := range targets {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, fmt.Errorf("writing HTML reports: %w", err)
		}
	}
	return targets, nil
}

// htmlIsDir reports whether --html names a directory of pages rather than
// the file of one page: a name that ends in .html is a page's file, any
// other a directory, made as needed, with a trailing slash or without.
// Before, for one report given as a file, the slash decided: --html pages
// wrote a file named pages, --html pages/ made the directory (red team
// rtO, item 11). Where the name cannot be what it says, the error says
// what to give: a name ending in .html for several reports or a directory
// of them (whose number must not decide, see htmlTargets), or that is a
// directory already; a name without it that is a file already (such as
// the page an earlier version wrote for --html pages).
func htmlIsDir(html string, files []reportFile) (bool, error) {
	slash := strings.HasSuffix(html, "/") || strings.HasSuffix(html, string(filepath.Separator))
	page := !slash && strings.EqualFold(filepath.Ext(html), ".html")
	fi, statErr := os.Stat(html)
	exists := statErr == nil
	switch {
	case page && exists && fi.IsDir():
		return false, usageError{fmt.Errorf("--html %s is a directory, and a name ending in .html names one page's file: give %s%c to write the pages in it", html, html, filepath.Separator)}
	case page && len(files) == 1 && files[0].dir != "":
		return false, usageError{fmt.Errorf("--html %s names one page's file (it ends in .html), and %s is a directory of reports: give a directory for their pages (--html pages/), which holds a page per report however many it holds", html, files[0].dir)}
	case page && len(files) != 1:
		return false, usageError{fmt.Errorf("--html %s names one page's file (it ends in .html), and there are %d reports: give a directory for their pages (--html pages/)", html, len(files))}
	case page:
		return false, nil
	case exists && !fi.IsDir():
		return false, usageError{fmt.Errorf("--html %s is a file, and a name that does not end in .html names a directory of pages: give a name ending in .html for one report's page, or a directory", html)}
	}
	return true, nil
}

// writeAtomic renders into memory, then replaces path through a temporary
// file in the same directory, so a failed render never leaves half a file.
func writeAtomic(path string, render func(io.Writer) error) (int, error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return 0, err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	return buf.Len(), nil
}

func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}
