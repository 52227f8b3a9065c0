// Package generator turns //agentidem: annotations into tracing wrappers.
//
// It is what the agentidem-gen command runs. Most users never import it:
// they add the command to their module (go get -tool
// github.com/agentidem/agentidem-go/cmd/agentidem-gen), annotate their tool
// functions, put this line in one file of the package and run go generate:
//
//	//go:generate go tool agentidem-gen
//
// # From annotation to wrapper
//
// For an annotated tool
//
//	//agentidem:write identity=id
//	func refund(ctx context.Context, id string) (Receipt, error) { ... }
//
// the generator writes, in agentidem_gen.go of the same package,
//
//	func refundTraced(ctx ai_context.Context, id string) (aiR0 Receipt, aiErr error) {
//		if !agentidemrt.Enabled() {
//			return refund(ctx, id) // production: one atomic load and a branch
//		}
//		... // record args, identity and outcome in the active run
//	}
//
// with the same parameters and results (every package the file imports gets
// an alias of its own, ai_context here, so that no name of the package can
// collide with it), plus a compile-time guard
// (_ = agentidemrt.SignatureChangedRunGoGenerate[func(ai_context.Context,
// string) (Receipt, error)](refund)) that breaks the build when refund's
// signature changes and go generate was not run again, with an error that
// names SignatureChangedRunGoGenerate. Each op's declaration records the
// annotation it was generated from: a suite whose annotated files no longer
// hold it (idempotent removed, another identity) stops before its baseline
// and says to run go generate (runtime.Op.Directive). The agent calls refundTraced; package runtime records the call when a
// run is active (runtime.RunTraced, testkit) and does nothing else otherwise.
// Methods get methods ((*Svc).Refund gets (*Svc).RefundTraced); generic
// functions and methods of generic types get generic wrappers.
//
// # What is checked
//
// Every problem is reported as "file:line:col: message", all of them, not
// just the first, and then nothing is written:
//
//   - the syntax of each directive (unknown or duplicate keys, a write without
//     identity=, bad quoting), by package internal/directive;
//   - each identity and entity expression, type-checked in the scope of the
//     function's parameters: it must name existing parameters or package-level
//     names (not results, which have no value yet), be a value, receive from
//     no channel, and have a type that canonical JSON can encode (no func,
//     chan, complex, unsafe.Pointer, or struct without exported fields);
//     a warning names the fields a struct's JSON leaves out (json:"-", an
//     unexported id), which two values then cannot differ in;
//   - determinism: time.Now, math/rand, crypto/rand and uuid.New* anywhere in
//     an identity are rejected, since a retry would get a fresh identity;
//   - placement: a read or write directive that is not in the doc comment
//     of a function declaration, a second one on one function, one on init
//     or _; a comment meant as a directive that is not one (a block comment
//     /*agentidem:write, a misspelt prefix //agentidm:write, //agentidem
//     write without the colon); and each of these in the files the load
//     leaves out (build constraints, _test.go files without Config.Tests),
//     where a bad directive is wrong in every build;
//   - names: two ops with one name, two wrappers with one name, a wrapper
//     name already declared (in the package, as a field or method of the
//     receiver, as an import or dot-imported name of one of its files, or in
//     one of its _test.go files), redact= of an unknown parameter, after=
//     naming the op itself, a name no op has in the package or the
//     packages it imports, or one two imported packages both declare.
//
// Op names are unique in a package only. Each generated descriptor carries
// its package's import path and is declared at package initialization
// (runtime.Declare): ops of one name that packages linked into one test
// binary declare are named after their packages there
// (stripe.Client.Refund), and an after= naming another package's op is
// written with that package's path so that it follows the op.
//
// //agentidem:ignore is not the generator's: it silences agentidem-vet's
// diagnostics on a line or a function and changes no wrapper, so the
// generator skips it wherever it is, and agentidem-vet checks it (one
// without a reason is "bad directive: //agentidem:ignore needs a reason").
//
// Warnings do not stop generation: a write without an error result (it is
// traced, but no fault can be injected into it) or without a context, an
// annotated function in a file with a build constraint (the generated file
// has none), one in a file this build leaves out (the warning names the
// --tags, GOOS or --tests that would include it), and "// agentidem:write"
// typed with a space, which Go reads as prose.
//
// Names in the wrappers never shadow what their bodies use: a parameter
// named any, nil or like the function, a blank type parameter and unnamed
// parameters get fresh names. An identity or entity expression is
// evaluated under a recover (runtime.EvalIdentity) when it can panic, so
// that the tool runs as it would in production; the suite reports
// identity_panicked naming the expression.
//
// # Files
//
// One file per package, agentidem_gen.go, starting with [Header] so that it
// matches ^// Code generated .* DO NOT EDIT\.$. With [Config].Tests,
// functions annotated in _test.go files get their wrappers in
// agentidem_gen_test.go (package p) and agentidem_gen_ext_test.go (package
// p_test). Output is gofmt'ed and byte-identical for the same input. Files
// are written atomically (temporary file and rename), a file without the
// header is never overwritten or removed, and the generated file of a package
// whose annotations are all gone is removed. A stale generated file never
// blocks regeneration: it is hidden from the type checker while loading.
// [Output.Stale] is what agentidem-gen check reports.
//
// # Inside
//
// Three steps, one file each: load.go loads the target packages with
// golang.org/x/tools/go/packages; model.go validates each directive against
// the types and builds the IR, a [Package] holding one [Op] per annotated
// function (its name, receiver, type parameters, parameters, results, where
// the context and error are, and its directive); emit.go renders the IR with
// github.com/dave/jennifer.
//
// # Tests
//
// testdata/<case>/ at the repository root holds the golden cases: an input
// package, want.golden (the expected agentidem_gen.go) and a trace_test.go
// that the end-to-end test runs against the generated code in a temporary
// module. After a deliberate change to the output, refresh the golden files
// with
//
//	go test ./generator -update
//
// and review the diff. testdata/errors is a module of its own listing every
// error the generator reports, each checked for its message and for the
// source text its column points at.
package generator
