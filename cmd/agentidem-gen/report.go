package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/spf13/cobra"
)

// reportConfig is the report subcommand's flags.
type reportConfig struct {
	html  string
	junit string
	quiet bool
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var cfg reportConfig
	cmd := &cobra.Command{
		Use:   "report [--html out.html] [--junit out.xml] FILE.json",
		Short: "Print a saved fault-suite report; write it as HTML or JUnit XML",
		Long: `report reads a fault-suite report saved as JSON (testkit writes one per test
to $AGENTIDEM_REPORT_DIR/<Test>.json) and prints the readable summary: the
verdict, every scenario with its fault, and every finding with its op,
identity, calls and replay line.

--html writes one self-contained HTML page (no network, no external file):
per scenario a timeline of the calls of each invocation, parallel batches
shaded, injected faults and findings marked, details of every call on click.
--junit writes JUnit XML with one testcase per scenario, for CI systems.

On a terminal the steps are shown as they run and the summary is colored,
unless NO_COLOR is set; pipes and files get plain text. Exit status: 0 when
the report was rendered (whatever its verdict), 1 when the report cannot be
read or an output cannot be written, 2 for usage errors.`,
		Example: `  AGENTIDEM_REPORT_DIR=reports go test ./agent/
  agentidem-gen report reports/TestRefundAgent.json
  agentidem-gen report --html report.html --junit report.xml reports/TestRefundAgent.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("report takes exactly one FILE.json, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cfg, args[0], stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&cfg.html, "html", "", "write the report as one self-contained HTML `file`")
	cmd.Flags().StringVar(&cfg.junit, "junit", "", "write the report as JUnit XML to `file`")
	cmd.Flags().BoolVarP(&cfg.quiet, "quiet", "q", false, "do not print the summary")
	return cmd
}

// runReport reads the report at path, prints its summary and writes the
// requested outputs.
func runReport(cfg reportConfig, path string, stdout, stderr io.Writer) error {
	out := render.StyleOf(stdout)
	steps := 1
	if cfg.html != "" {
		steps++
	}
	if cfg.junit != "" {
		steps++
	}
	// Progress goes to stderr, and only when stdout is a live terminal:
	// piped output and CI logs stay plain.
	prog := render.NewProgress(stderr, render.Style{Live: out.Live && render.IsTerminal(stderr), Color: out.Color}, steps)
	prog.Step("reading " + path)
	rep, err := runtime.ReadReport(path)
	if err != nil {
		prog.Done("")
		return err
	}
	var wrote []string
	if cfg.html != "" {
		prog.Step("rendering HTML to " + cfg.html)
		n, err := writeAtomic(cfg.html, func(w io.Writer) error { return render.HTML(w, rep) })
		if err != nil {
			prog.Done("")
			return err
		}
		wrote = append(wrote, fmt.Sprintf("wrote %s (%s)", cfg.html, size(n)))
	}
	if cfg.junit != "" {
		prog.Step("rendering JUnit XML to " + cfg.junit)
		n, err := writeAtomic(cfg.junit, func(w io.Writer) error { return render.JUnit(w, rep) })
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
		fmt.Fprintln(stdout, render.Text(rep, opts...))
	}
	for _, s := range wrote {
		fmt.Fprintf(stderr, "agentidem-gen: %s\n", s)
	}
	return nil
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
