package generator_test

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentidem/agentidem-go/generator"
)

// Generate validates the annotations of a package and renders its wrappers
// in memory; Write puts them on disk, Stale says what is out of date.
func ExampleGenerate() {
	out, err := generator.Generate(generator.Config{Dir: ".."}, "./testdata/options")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range out.Files {
		fmt.Println(filepath.Base(f.Path))
		for _, line := range strings.Split(string(f.Data), "\n") {
			if strings.HasPrefix(line, "func ") {
				fmt.Println(" ", strings.TrimSuffix(line, " {"))
			}
		}
	}
	// Output:
	// agentidem_gen.go
	//   func createInvoiceTraced(ctx ai_context.Context, customer string, amount int) (aiR0 string, aiErr error)
	//   func AttachInvoice(ctx ai_context.Context, invoice string, note string) (aiErr error)
	//   func chargeTraced(ctx ai_context.Context, customer string, card Card, amount int) (aiErr error)
	//   func tokenizeTraced(ctx ai_context.Context, card Card, pin string) (aiR0 string, aiErr error)
	//   func setStatusTraced(ctx ai_context.Context, order string, status string) (aiErr error)
	//   func lookupTraced(id string) (aiR0 string, aiErr error)
	//   func upsertTraced(ctx ai_context.Context, tenant string, id string, kind string, rows []string, meta map[string]any) (aiErr error)
}

// Every bad annotation is reported with its position, and nothing is
// generated.
func ExampleErrors() {
	_, err := generator.Generate(generator.Config{Dir: "../testdata/errors"}, "./multi")
	if list, ok := err.(generator.Errors); ok {
		for _, e := range list {
			msg := e.Error()
			fmt.Println(msg[strings.Index(msg, "multi/"):])
		}
	}
	// Output:
	// multi/a.go:4:28: identity=nope: undefined: nope (parameters of a: id)
	// multi/b.go:3:31: unknown key "bogus" for //agentidem:write: want one of identity, name, entity, after, redact, wrapper, idempotent
}
