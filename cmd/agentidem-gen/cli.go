package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/spf13/cobra"
)

// usageError marks an error in how the command was called (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

// errStale is returned by check when files are out of date; the files are
// already listed on stderr.
var errStale = errors.New("generated files are stale: run go generate ./...")

const long = `agentidem-gen writes tracing wrappers for agent tool functions.

Annotate a tool function in its doc comment:

  //agentidem:read [name=NAME] [entity=EXPR]
  //agentidem:write identity=EXPRS [name=NAME] [entity=EXPR] [after=NAME,NAME] [redact=PARAM,PARAM] [wrapper=IDENT] [idempotent]

and add to one file of the package:

  //go:generate go tool agentidem-gen

after "go get -tool github.com/agentidem/agentidem-go/cmd/agentidem-gen" in your
module (inside this repository: go run ./cmd/agentidem-gen).

go generate then writes agentidem_gen.go with a wrapper per annotated function
(refund -> refundTraced, (*Svc).Refund -> (*Svc).RefundTraced) that has the same
signature. Your agent calls the wrappers; package testkit runs it under faults
and schedules and reports duplicate writes and ordering bugs.

For example:

  //agentidem:write identity=paymentID redact=card
  func refund(ctx context.Context, paymentID string, card Card) (Receipt, error)

gets refundTraced, with the same parameters and results.

identity is a comma-separated list of Go expressions over the parameters: the
logical identity of the effect (two successful calls with equal identity are one
effect done twice). It must be deterministic: time.Now, math/rand, crypto/rand
and uuid.New* are rejected. A value with spaces is written as a Go string:
identity="order.ID, fmt.Sprint(n)".

Packages are go list patterns (./..., ./agent), default ".". Every bad annotation
is reported as file:line:col: message, and then no file is written.

Exit status: 0 on success, 1 when the input has errors (all are listed) or check
finds stale files, 2 when the command line is wrong.`

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	var cfg generator.Config
	root := &cobra.Command{
		Use:   "agentidem-gen [generate] [packages]",
		Short: "Generate tracing wrappers for //agentidem: annotated tool functions",
		Long:  long,
		Example: `  go generate ./...                      # runs agentidem-gen in each package with the go:generate line
  agentidem-gen ./agent/...              # the same, by hand
  agentidem-gen check ./...              # in CI: fail when generated code is stale
  agentidem-gen report report.json       # print a saved fault-suite report
  agentidem-gen audit spans.jsonl        # find duplicate effects in exported production traces`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return generate(cfg, args, stdout, stderr)
		},
	}
	root.PersistentFlags().StringSliceVar(&cfg.Tags, "tags", nil, "build tags to load packages with (comma-separated)")
	root.PersistentFlags().BoolVar(&cfg.Tests, "tests", false, "also read annotations in _test.go files")

	gen := &cobra.Command{
		Use:   "generate [packages]",
		Short: "Write agentidem_gen.go in each package with annotations (the default command)",
		Long: `generate loads the packages (default ".") and writes agentidem_gen.go in each
package that has annotated functions. A stale agentidem_gen.go in a package with
no annotations left is removed. Files without the generated header are never
overwritten. All errors are listed, each as file:line:col: message.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return generate(cfg, args, stdout, stderr)
		},
	}
	check := &cobra.Command{
		Use:   "check [packages]",
		Short: "Exit 1 and name each generated file that is out of date (for CI)",
		Long: `check generates in memory and compares with the files on disk. It writes
nothing. It exits 1 and lists every generated file that is missing, different or
left over, so CI fails when someone changed an annotated function and did not
run go generate.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := generator.Generate(cfg, args...)
			if err != nil {
				return err
			}
			printWarnings(stderr, out.Warnings)
			stale := out.Stale()
			for _, p := range stale {
				fmt.Fprintf(stderr, "stale: %s\n", p)
			}
			if len(stale) > 0 {
				return errStale
			}
			if len(out.Files) == 1 {
				fmt.Fprintln(stdout, "agentidem-gen: 1 generated file up to date")
			} else {
				fmt.Fprintf(stdout, "agentidem-gen: %d generated files up to date\n", len(out.Files))
			}
			return nil
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(gen, check, newReportCmd(stdout, stderr), newAuditCmd(stdinReader, stdout, stderr))
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	return root
}

func generate(cfg generator.Config, patterns []string, stdout, stderr io.Writer) error {
	out, err := generator.Generate(cfg, patterns...)
	if err != nil {
		return err
	}
	printWarnings(stderr, out.Warnings)
	return out.Write()
}

func printWarnings(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintln(w, s)
	}
}

// run executes the command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ue usageError
	var list generator.Errors
	switch {
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "accepts "):
		fmt.Fprintf(stderr, "agentidem-gen: %v\nRun 'agentidem-gen --help' for usage.\n", err)
		return 2
	case errors.As(err, &list):
		for _, e := range list {
			fmt.Fprintln(stderr, e)
		}
		if len(list) == 1 {
			fmt.Fprintln(stderr, "agentidem-gen: 1 error")
		} else {
			fmt.Fprintf(stderr, "agentidem-gen: %d errors\n", len(list))
		}
		return 1
	case errors.Is(err, errStale):
		fmt.Fprintf(stderr, "agentidem-gen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "agentidem-gen: %v\n", err)
	return 1
}
