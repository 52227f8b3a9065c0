package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaleDirectiveStopsTheSuite: a wrapper generated from an annotation
// the source no longer holds (idempotent removed, go generate not run
// again) is a *ConfigError that names both and says to run go generate;
// an annotation added since is named too. Before, the old wrapper judged
// a buggy agent's repeats as absorbed, and go test passed (red team rtV,
// item 8).
func TestStaleDirectiveStopsTheSuite(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "agentidem_gen.go")
	src := filepath.Join(dir, "client.go")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	op := func(name, pos, directive string) *Op {
		return &Op{Name: name, declaredName: name, Pos: pos, Directive: directive, genFile: gen}
	}
	ops := []*Op{
		op("create_ticket", "client.go:9", "//agentidem:write identity=t.OrderID name=create_ticket idempotent"),
		op("refund", "client.go:14", "//agentidem:write identity=orderID name=refund"),
	}
	fresh := `package desk

// CreateTicket opens a ticket.
//
//agentidem:write identity=t.OrderID name=create_ticket idempotent
func (c *Client) CreateTicket(ctx context.Context, t Ticket) error { return nil }

// Refund refunds.
//agentidem:write identity=orderID name=refund   
func (c *Client) Refund(ctx context.Context, orderID string) error { return nil }

//agentidem:ignore the linter's, in no op
`
	write(fresh)
	if err := compareDirectives(ops); err != nil {
		t.Fatalf("annotations as generated: %v", err)
	}
	// A line of a block comment or of a raw string that reads like an
	// annotation annotates nothing, and go generate would not make it go.
	write(fresh + "\n/*\n//agentidem:write identity=x name=in_a_block_comment\n*/\nvar help = `\n//agentidem:write identity=x name=in_a_raw_string\n`\n")
	if err := compareDirectives(ops); err != nil {
		t.Fatalf("an annotation's text outside a line comment: %v", err)
	}

	write(strings.Replace(fresh, " idempotent\n", "\n", 1) + "\n// Email mails.\n//agentidem:write identity=to\nfunc (c *Client) Email(ctx context.Context, to string) error { return nil }\n")
	err := compareDirectives(ops)
	var cfg *ConfigError
	if !errors.As(err, &cfg) {
		t.Fatalf("idempotent removed: %v, want a *ConfigError", err)
	}
	for _, want := range []string{
		gen + ": generated from annotations the source no longer holds (",
		"the wrapper of create_ticket (client.go:9) was generated from //agentidem:write identity=t.OrderID name=create_ticket idempotent, which client.go no longer holds",
		"client.go:5 holds //agentidem:write identity=t.OrderID name=create_ticket, from which no wrapper was generated",
		"client.go:15 holds //agentidem:write identity=to, from which no wrapper was generated",
		"run go generate in " + dir,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "refund") {
		t.Errorf("names refund, whose annotation is as generated: %v", err)
	}

	// What cannot be read is not compared: a file not there, a path of a
	// -trimpath build, ops generated before Directive was recorded.
	os.Remove(src)
	if err := compareDirectives(ops); err != nil {
		t.Errorf("source not there: %v", err)
	}
	write("package desk\n")
	for _, o := range []*Op{
		{Name: "a", Pos: "client.go:3", Directive: "//agentidem:read", genFile: "example.com/desk/agentidem_gen.go"},
		{Name: "b", Pos: "client.go:3", genFile: gen},
	} {
		if err := compareDirectives([]*Op{o}); err != nil {
			t.Errorf("op %s: %v", o.Name, err)
		}
	}
}

// TestDeclareRecordsTheGeneratedFile: Declare keeps the file that called
// it, which for generated code is the generated file, next to the
// annotated ones.
func TestDeclareRecordsTheGeneratedFile(t *testing.T) {
	o := Declare(&Op{Name: "stale_probe", Pkg: "example.com/probe", Pos: "probe.go:1"})
	if filepath.Base(o.genFile) != "stale_test.go" {
		t.Errorf("genFile %q, want this file (Declare's caller)", o.genFile)
	}
}
