// Package generator turns //agentidem: annotations into tracing wrappers.
//
// It works in three steps, one file each:
//
//   - load.go loads the target packages with golang.org/x/tools/go/packages
//     (syntax and types of the targets only; previously generated files are
//     hidden behind an overlay so a stale one never blocks regeneration);
//   - model.go validates each directive against the types of its function
//     and builds the IR below: a [Package] holding one [Op] per annotated
//     function;
//   - emit.go renders the IR with github.com/dave/jennifer into one
//     agentidem_gen.go per package, gofmt'ed and byte-identical on every run.
//
// Errors in the input are collected, not returned on the first: every bad
// directive of every package is reported as "file:line:col: message".
//
// The IR is small on purpose: an Op knows its function (name, receiver,
// type parameters, parameters, results, where the context and error are), its
// directive (kind, op name, identity and entity expressions, after, redact,
// wrapper) and nothing of how it will be printed.
package generator
