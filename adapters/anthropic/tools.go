package agentidemanthropic

import "github.com/agentidem/agentidem-go/toolspec"

// Tools maps the name of a tool, as the model calls it, to the Spec that
// says what kind of op it is. A tool missing from the map is handed to the
// runner unchanged: it is not traced and gets no faults. The spec types and
// constructors are package toolspec's, shared by every adapter.
type Tools = toolspec.Tools

// Spec describes one tool to agentidem: read or write, how its identity and
// entity come from the tool's JSON input, which ops must happen before it,
// and which input fields never enter a trace. Build it with Read or Write.
type Spec = toolspec.Spec

// Option refines a Spec.
type Option = toolspec.Option

// The Spec constructors and options; see package toolspec for each.
var (
	Read         = toolspec.Read
	Write        = toolspec.Write
	Identity     = toolspec.Identity
	IdentityFunc = toolspec.IdentityFunc
	Entity       = toolspec.Entity
	EntityFunc   = toolspec.EntityFunc
	After        = toolspec.After
	Redact       = toolspec.Redact
	Name         = toolspec.Name
	Idempotent   = toolspec.Idempotent
)
