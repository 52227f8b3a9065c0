package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/internal/audit"
	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/spf13/cobra"
)

// auditConfig is the audit subcommand's flags.
type auditConfig struct {
	json   string
	junit  string
	window time.Duration
	quiet  bool
}

// errUnsafe is returned when the audit found an error; the findings are
// already printed.
var errUnsafe = errors.New("the audit found duplicate effects or ordering hazards")

func newAuditCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var cfg auditConfig
	cmd := &cobra.Command{
		Use:                   "audit [--json out.json] [--junit out.xml] [--window 10m] [-q] FILE...",
		DisableFlagsInUseLine: true,
		Short:                 "Find duplicate effects and ordering hazards in exported OpenTelemetry traces",
		Long: `audit reads the spans that github.com/agentidem/agentidem-go/otel makes of every
tool call in production, as exported by the OpenTelemetry Collector's file
exporter (OTLP JSON, one object per line) or by the Go SDK's stdouttrace
exporter (- reads standard input), and reports what the fault suite reports
in tests, from production data:

  duplicate_write             a write executed successfully twice with one
                              identity (not replayed by its sink, not declared
                              idempotent), with both spans' trace ids and times
  dependent_calls_concurrent  an op in flight together with an op it declares
                              after=, under the same parent span
  identity_unstable           after a failed attempt, a retry from the same
                              call site on the same entity with the same other
                              arguments but a new identity

Identities are compared by their keyed digests: spans of processes that used
different keys ($AGENTIDEM_IDENTITY_KEY) never match, and the audit says so.
Malformed or truncated input, JSON of other schemas and spans without agentidem
attributes are skipped and counted; the first problems are listed with their
file:line. The input is streamed: memory grows with the distinct successful
write identities (remembered for 7 days of span time) and the traces active
within --window, not with the file.

--json writes the audit as a report (runtime/report.schema.json), which
agentidem-gen report renders as text, HTML or JUnit; --junit writes JUnit XML.
Exit status: 0 when the audit is clean, 1 when it found an error or no
agentidem span at all, or an input cannot be read, 2 for usage errors.`,
		Example: `  agentidem-gen audit /var/log/otel/spans.jsonl
  agentidem-gen audit --json audit.json spans-*.jsonl && agentidem-gen report --html audit.html audit.json
  go run ./agent 2>/dev/null | agentidem-gen audit -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("audit needs at least one FILE of exported spans (- for standard input)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAudit(cfg, args, stdin, stdout)
		},
	}
	cmd.Flags().StringVar(&cfg.json, "json", "", "write the audit as a JSON report to `file`")
	cmd.Flags().StringVar(&cfg.junit, "junit", "", "write the audit as JUnit XML to `file`")
	cmd.Flags().DurationVar(&cfg.window, "window", 10*time.Minute, "how long a trace is kept for the ordering and retry checks after its last span")
	cmd.Flags().BoolVarP(&cfg.quiet, "quiet", "q", false, "do not print the summary")
	return cmd
}

func runAudit(cfg auditConfig, files []string, stdin io.Reader, stdout io.Writer) error {
	started := time.Now()
	res, err := audit.Files(audit.Config{Window: cfg.window}, files, stdin)
	if err != nil && !errors.Is(err, audit.ErrNoSpans) {
		return err
	}
	if !cfg.quiet {
		if werr := res.WriteText(stdout); werr != nil {
			return werr
		}
	}
	replay := "agentidem-gen audit " + strings.Join(files, " ")
	rep := res.Report("audit of "+strings.Join(files, ", "), replay, started.UTC(), time.Since(started))
	if cfg.json != "" {
		if _, werr := writeAtomic(cfg.json, rep.WriteJSON); werr != nil {
			return fmt.Errorf("writing %s: %w", cfg.json, werr)
		}
	}
	if cfg.junit != "" {
		if _, werr := writeAtomic(cfg.junit, func(w io.Writer) error { return render.JUnit(w, rep) }); werr != nil {
			return fmt.Errorf("writing %s: %w", cfg.junit, werr)
		}
	}
	if err != nil {
		return err
	}
	if !res.Safe() {
		return errUnsafe
	}
	return nil
}

// stdinReader is the standard input, a variable for tests.
var stdinReader io.Reader = os.Stdin
