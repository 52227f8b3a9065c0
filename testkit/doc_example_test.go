package testkit_test

import (
	"context"
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/refund"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// TestKeyedAgentRefundsOnce is the example that opens the package doc, as
// it is there: TestPackageDocOpensWithCodeThatRuns keeps the two equal, so
// that the doc shows a test that compiles and passes.
func TestKeyedAgentRefundsOnce(t *testing.T) {
	var bank *refund.Bank
	testkit.TestAgent(t, func(ctx context.Context) error {
		_, err := (&refund.KeyedAgent{Bank: bank}).Run(ctx, "payment-123")
		return err
	},
		testkit.Setup(func(ctx context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil }),
		testkit.Invariant("at most one refund", func(*runtime.Trace) error {
			if n := len(bank.Refunds()); n > 1 {
				return fmt.Errorf("%d refunds", n)
			}
			return nil
		}),
	)
}

// TestPackageDocOpensWithCodeThatRuns: the package doc's first code block
// called (&refund.Agent{Bank: bank}).Run, which examples/refund never had,
// and nothing compiled it. The block must be in this file as it is, where
// it compiles and runs as TestKeyedAgentRefundsOnce.
func TestPackageDocOpensWithCodeThatRuns(t *testing.T) {
	block := firstCodeBlock(t, "doc.go")
	self, err := os.ReadFile("doc_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(self), block) {
		t.Errorf("the first code block of the package doc (doc.go) is not in doc_example_test.go as it is: make the test there the block's code\n%s", block)
	}
}

// firstCodeBlock returns the text of the first code block (an indented
// block, as go doc shows it) of the package comment in file.
func firstCodeBlock(t *testing.T, file string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatalf("%s has no package comment", file)
	}
	var p comment.Parser
	for _, b := range p.Parse(f.Doc.Text()).Content {
		if code, ok := b.(*comment.Code); ok {
			return code.Text
		}
	}
	t.Fatalf("the package comment in %s has no code block", file)
	return ""
}
