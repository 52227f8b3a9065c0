// Package audit finds, in traces exported from production, the effects the
// fault suite finds in tests: a write executed twice with one identity, an op
// in flight together with an op it must follow, a retry that changed its
// identity. It reads the spans that package
// github.com/agentidem/agentidem-go/otel makes of every tool call, as the
// OpenTelemetry Collector's file exporter (OTLP JSON) or the Go SDK's
// stdouttrace exporter wrote them. agentidem-gen audit is its command line.
//
// The audit streams: it keeps one small record per distinct successful write
// identity (about 100 bytes, for Config.DupWindow) and the spans of the
// traces active within Config.Window, never the whole input.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// Config tunes an audit; the zero value is ready to use.
type Config struct {
	// Window is how long after its last span ended a trace is still kept
	// for the ordering and retry checks, measured in span time (default
	// ten minutes). Spans of one trace further apart in the input than that
	// are not compared with each other.
	Window time.Duration
	// DupWindow is how long a successful write identity is remembered
	// after its execution, in span time (default 7 days): a duplicate
	// further apart than that is not seen. It bounds the audit's memory on
	// an endless stream.
	DupWindow time.Duration
	// MaxTraceSpans bounds the spans kept per trace (default 10000); the
	// ordering checks skip the rest of a longer trace and say so.
	MaxTraceSpans int
}

// Auditor consumes spans one at a time and collects findings.
type Auditor struct {
	cfg     Config
	intern  map[string]string
	files   []string
	fileIdx map[string]int32

	names   map[string]uint32 // op names and key ids, numbered
	afters  map[string][]string
	writes  map[writeKey]writeRec
	dups    []*dupGroup
	dupEvic int // write identities dropped from DupWindow

	traces  map[[16]byte]*traceState
	maxEnd  int64
	evicted int
	longTr  int

	pairs    map[string]*pairFinding // dependent_calls_concurrent, by op pair
	pairList []*pairFinding
	unstable map[string]*pairFinding // identity_unstable, by op and site
	unstList []*pairFinding

	keyIDs   map[string]int
	spans    int
	repeated int
	absorbed int
	updates  int
}

// ref points at one span: enough to name it in a finding.
type ref struct {
	trace      [16]byte
	span       [8]byte
	start, end int64
	file       int32
	line       int32
	write      bool
	failed     bool
}

type writeKey struct {
	op, keyID uint32
	id        [16]byte
}

// writeRec is the first successful execution of one write identity: what
// the audit keeps per identity (about 100 bytes with the map's share).
type writeRec struct {
	first ref
	args  [16]byte // the first execution's arguments
	count int32
	dup   int32 // 1 + the index in Auditor.dups once there is a duplicate
}

// dupGroup is an identity executed more than once.
type dupGroup struct {
	op, identity string
	count        int
	refs         []ref // the first occurrences (up to maxRefs)
	seen         map[[8]byte]struct{}
}

const maxRefs = 10

// tspan is what a trace keeps of each span (about 150 bytes).
type tspan struct {
	ref
	op, site, keyID string   // interned
	parent          [8]byte  // the parent span's id
	after           []string // shared by the spans of one op
	fw              *digests // a failed write's digests, for identity_unstable
}

// digests are a write's identity, entity and arguments.
type digests struct {
	identity, entity, args [16]byte
	hasArgs                bool
	raw                    string // the identity digest as read
}

func digestsOf(s *Span) *digests {
	d := &digests{identity: digestKey(s.Identity), entity: digestKey(s.Entity), raw: s.Identity}
	if s.Args != "" {
		d.args, d.hasArgs = digestKey(s.Args), true
	}
	return d
}

type traceState struct {
	lastEnd int64
	spans   []tspan
	full    bool
}

type pairFinding struct {
	code       string
	a, b       tspan
	count      int
	identities []string
}

// New returns an auditor.
func New(cfg Config) *Auditor {
	if cfg.Window <= 0 {
		cfg.Window = 10 * time.Minute
	}
	if cfg.DupWindow <= 0 {
		cfg.DupWindow = 7 * 24 * time.Hour
	}
	if cfg.MaxTraceSpans <= 0 {
		cfg.MaxTraceSpans = 10000
	}
	return &Auditor{cfg: cfg, intern: map[string]string{}, fileIdx: map[string]int32{},
		names: map[string]uint32{}, afters: map[string][]string{}, writes: map[writeKey]writeRec{}, traces: map[[16]byte]*traceState{},
		pairs: map[string]*pairFinding{}, unstable: map[string]*pairFinding{}, keyIDs: map[string]int{}}
}

func (a *Auditor) str(s string) string {
	if v, ok := a.intern[s]; ok {
		return v
	}
	if len(a.intern) < 100000 {
		a.intern[s] = s
	}
	return s
}

// digestKey is 128 bits of a digest: the digest itself when it is the hex of
// an HMAC, else a hash of it.
func digestKey(d string) [16]byte {
	var k [16]byte
	if h, ok := strings.CutPrefix(d, "hmac-sha256:"); ok && len(h) == 64 {
		if _, err := hex.Decode(k[:], []byte(h[:32])); err == nil {
			return k
		}
	}
	sum := sha256.Sum256([]byte(d))
	copy(k[:], sum[:16])
	return k
}

func (a *Auditor) refOf(s *Span) ref {
	r := ref{start: s.Start.UnixNano(), end: s.End.UnixNano()}
	hex.Decode(r.trace[:], []byte(s.TraceID))
	hex.Decode(r.span[:], []byte(s.SpanID))
	file, line := s.Pos, ""
	if i := strings.LastIndexByte(s.Pos, ':'); i >= 0 {
		file, line = s.Pos[:i], s.Pos[i+1:]
	}
	idx, ok := a.fileIdx[file]
	if !ok {
		idx = int32(len(a.files))
		a.files = append(a.files, file)
		a.fileIdx[file] = idx
	}
	r.file = idx
	fmt.Sscan(line, &r.line)
	return r
}

// Add audits one span (one with agentidem attributes, as Read passes them).
func (a *Auditor) Add(s *Span) {
	a.spans++
	if s.KeyID != "" {
		a.keyIDs[a.str(s.KeyID)]++
	}
	r := a.refOf(s)
	write := s.Kind == "write"
	failed := s.Status == "failed" || (s.Status == "" && s.StatusError)
	r.write, r.failed = write, failed
	success := s.Status == "success"
	t := a.traces[r.trace]
	if t != nil {
		for i := range t.spans {
			if t.spans[i].span == r.span {
				a.repeated++ // the same span exported twice: one execution
				return
			}
		}
	}

	if write && success && !s.Replayed && s.Identity != "" {
		if a.addWrite(s, r) {
			return
		}
	}

	ts := tspan{ref: r, op: a.str(s.Op), site: a.str(s.Site), keyID: a.str(s.KeyID), after: a.afterOf(s.Op, s.After)}
	if write && failed {
		ts.fw = digestsOf(s)
	}
	hex.Decode(ts.parent[:], []byte(s.Parent))
	if t == nil {
		t = &traceState{}
		a.traces[r.trace] = t
	}
	if len(t.spans) >= a.cfg.MaxTraceSpans {
		if !t.full {
			t.full = true
			a.longTr++
		}
	} else {
		a.checkTrace(t, &ts, s)
		t.spans = append(t.spans, ts)
	}
	t.lastEnd = max(t.lastEnd, r.end)
	a.maxEnd = max(a.maxEnd, r.end)
	if a.spans%4096 == 0 {
		a.evict()
	}
}

// unstableAfter reports whether attempt s, after the failed attempt p,
// changed the identity while keeping the entity (declared apart from the
// identity) and every other argument.
func (a *Auditor) unstableAfter(p, s *digests) bool {
	return p.identity != s.identity && p.entity == s.entity && p.entity != p.identity &&
		p.hasArgs && s.hasArgs && p.args == s.args
}

// afterOf returns after, shared with the earlier spans of op that declared
// the same list.
func (a *Auditor) afterOf(op string, after []string) []string {
	if len(after) == 0 {
		return nil
	}
	if prev, ok := a.afters[op]; ok && slices.Equal(prev, after) {
		return prev
	}
	list := make([]string, len(after))
	for i, d := range after {
		list[i] = a.str(d)
	}
	if len(a.afters) < 10000 {
		a.afters[a.str(op)] = list
	}
	return list
}

// num numbers a name (op or key id).
func (a *Auditor) num(s string) uint32 {
	n, ok := a.names[s]
	if !ok {
		n = uint32(len(a.names))
		a.names[s] = n
	}
	return n
}

// addWrite records a successful write execution; it reports whether the
// span was one already seen (then it is ignored).
func (a *Auditor) addWrite(s *Span, r ref) (repeated bool) {
	k := writeKey{op: a.num(s.Op), keyID: a.num(s.KeyID), id: digestKey(s.Identity)}
	w, ok := a.writes[k]
	switch {
	case !ok:
		a.writes[k] = writeRec{first: r, args: digestKey(s.Args), count: 1}
		return false
	case w.first.span == r.span && w.first.trace == r.trace:
		a.repeated++
		return true
	case s.Idempotent:
		// Declared idempotent: a repeat with the same arguments is
		// absorbed, with others it updates the first effect; never a
		// second effect.
		if digestKey(s.Args) == w.args {
			a.absorbed++
		} else {
			a.updates++
		}
		return false
	}
	if w.dup == 0 {
		a.dups = append(a.dups, &dupGroup{op: a.str(s.Op), identity: s.Identity, count: 1, refs: []ref{w.first},
			seen: map[[8]byte]struct{}{w.first.span: {}}})
		w.dup = int32(len(a.dups))
	}
	g := a.dups[w.dup-1]
	if _, ok := g.seen[r.span]; ok {
		a.repeated++
		return true
	}
	g.seen[r.span] = struct{}{}
	g.count++
	w.count++
	if len(g.refs) < maxRefs {
		g.refs = append(g.refs, r)
	}
	a.writes[k] = w
	return false
}

// evict drops the traces whose last span ended more than the window before
// the latest end seen.
func (a *Auditor) evict() {
	limit := a.maxEnd - int64(a.cfg.Window)
	for id, t := range a.traces {
		if t.lastEnd < limit {
			delete(a.traces, id)
			a.evicted++
		}
	}
	if a.spans%(64*4096) == 0 {
		limit := a.maxEnd - int64(a.cfg.DupWindow)
		for k, w := range a.writes {
			if w.dup == 0 && w.first.end < limit {
				delete(a.writes, k)
				a.dupEvic++
			}
		}
	}
}

func (t *tspan) rawIdentity() string {
	if t.fw != nil {
		return t.fw.raw
	}
	return ""
}

func overlap(x, y *tspan) bool { return x.start < y.end && y.start < x.end }

func declares(x *tspan, op string) bool {
	for _, d := range x.after {
		if d == op {
			return true
		}
	}
	return false
}

// checkTrace compares a new span with the spans of its trace.
func (a *Auditor) checkTrace(t *traceState, s *tspan, span *Span) {
	var prev *tspan // the latest earlier call of s's op from s's site
	for i := range t.spans {
		p := &t.spans[i]
		if p.parent != s.parent {
			continue // not dispatched by the same step
		}
		// dependent_calls_concurrent: one declares after= the other
		// and both were in flight at once.
		var dep, on *tspan
		switch {
		case declares(s, p.op):
			dep, on = s, p
		case declares(p, s.op):
			dep, on = p, s
		}
		if dep != nil && overlap(p, s) {
			key := on.op + "\x00" + dep.op
			f := a.pairs[key]
			if f == nil {
				f = &pairFinding{code: runtime.CodeDependentCallsConcurrent, a: *on, b: *dep}
				a.pairs[key] = f
				a.pairList = append(a.pairList, f)
			}
			f.count++
		}
		if s.write && p.write && p.op == s.op && p.site == s.site && s.site != "" && p.end <= s.start {
			if prev == nil || p.start > prev.start {
				prev = p
			}
		}
	}
	// identity_unstable: the attempt before this one at the same call
	// site failed, and this one changed the identity while keeping the
	// entity (declared apart from the identity) and every other argument.
	if p := prev; p != nil && p.failed && p.fw != nil && p.keyID == s.keyID && a.unstableAfter(p.fw, digestsOf(span)) {
		key := s.op + "\x00" + s.site
		f := a.unstable[key]
		if f == nil {
			f = &pairFinding{code: runtime.CodeIdentityUnstable, a: *p, b: *s, identities: []string{p.fw.raw, span.Identity}}
			a.unstable[key] = f
			a.unstList = append(a.unstList, f)
		}
		f.count++
	}
}

// Result is the outcome of an audit.
type Result struct {
	Stats    Stats
	Findings []Finding
	// Evicted counts traces dropped from the window; LongTraces those
	// whose spans beyond MaxTraceSpans were not compared.
	Evicted, LongTraces int
	// KeyIDs counts the spans of each digest key seen.
	KeyIDs map[string]int
	// Repeated counts spans read more than once (same trace and span
	// id): each counts as one execution.
	Repeated int
	// Absorbed counts repeats of ops declared idempotent with the same
	// arguments, Updates those with other arguments: neither is a
	// duplicate.
	Absorbed, Updates int
	// Forgotten counts write identities dropped after DupWindow.
	Forgotten int
}

// Finding is one problem found, with the spans that show it.
type Finding struct {
	runtime.Finding
	// Spans are the spans involved (for duplicate_write, every execution
	// up to ten).
	Spans []SpanRef `json:"spans"`
	// Count is how many times it was seen (executions, or pairs).
	Count int `json:"count"`
}

// SpanRef names a span in the input.
type SpanRef struct {
	Op       string    `json:"op"`
	Kind     string    `json:"kind"`
	Status   string    `json:"status"`
	Identity string    `json:"identity,omitempty"`
	TraceID  string    `json:"trace_id"`
	SpanID   string    `json:"span_id"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Pos      string    `json:"pos"`
}

func (a *Auditor) spanRef(op, identity string, r ref) SpanRef {
	pos := ""
	if int(r.file) < len(a.files) {
		pos = fmt.Sprintf("%s:%d", a.files[r.file], r.line)
	}
	kind, status := "read", "success"
	if r.write {
		kind = "write"
	}
	if r.failed {
		status = "failed"
	}
	return SpanRef{Op: op, Kind: kind, Status: status, Identity: identity, TraceID: hex.EncodeToString(r.trace[:]), SpanID: hex.EncodeToString(r.span[:]),
		Start: time.Unix(0, r.start).UTC(), End: time.Unix(0, r.end).UTC(), Pos: pos}
}

// Result returns the findings so far, in a stable order.
func (a *Auditor) Result(st Stats) *Result {
	res := &Result{Stats: st, Evicted: a.evicted, LongTraces: a.longTr, KeyIDs: a.keyIDs, Repeated: a.repeated, Absorbed: a.absorbed, Updates: a.updates, Forgotten: a.dupEvic}
	for _, w := range a.dups {
		f := Finding{Count: w.count}
		for _, r := range w.refs {
			f.Spans = append(f.Spans, a.spanRef(w.op, w.identity, r))
		}
		s1, s2 := f.Spans[0], f.Spans[1]
		f.Finding = runtime.Finding{Code: runtime.CodeDuplicateWrite, Severity: runtime.SeverityError,
			Ops: []string{w.op}, Identities: []string{w.identity},
			Message: fmt.Sprintf("%s executed successfully %d times with identity %s: trace %s at %s and trace %s at %s; make the sink idempotent on this identity (an idempotency key derived from the work)",
				w.op, w.count, short(w.identity), s1.TraceID, s1.Start.Format(time.RFC3339Nano), s2.TraceID, s2.Start.Format(time.RFC3339Nano))}
		res.Findings = append(res.Findings, f)
	}
	for _, p := range a.pairList {
		f := Finding{Count: p.count, Spans: []SpanRef{a.spanRef(p.a.op, p.a.rawIdentity(), p.a.ref), a.spanRef(p.b.op, p.b.rawIdentity(), p.b.ref)}}
		f.Finding = runtime.Finding{Code: p.code, Severity: runtime.SeverityError, Ops: []string{p.a.op, p.b.op},
			Message: fmt.Sprintf("%s declares after=%s but was in flight together with it (trace %s, %d time(s)): dispatch %s only once %s returned",
				p.b.op, p.a.op, f.Spans[0].TraceID, p.count, p.b.op, p.a.op)}
		res.Findings = append(res.Findings, f)
	}
	for _, p := range a.unstList {
		f := Finding{Count: p.count, Spans: []SpanRef{a.spanRef(p.a.op, p.a.rawIdentity(), p.a.ref), a.spanRef(p.b.op, p.b.rawIdentity(), p.b.ref)}}
		f.Finding = runtime.Finding{Code: p.code, Severity: runtime.SeverityError, Ops: []string{p.a.op}, Identities: p.identities,
			Message: fmt.Sprintf("%s was retried from the same call site (%s) on the same entity with the same other arguments but identity %s after attempt with identity %s failed (trace %s): a fresh key per attempt lets the sink run the retry as new work; derive the key from the work",
				p.a.op, shortSite(p.a.site), short(p.identities[1]), short(p.identities[0]), f.Spans[0].TraceID)}
		res.Findings = append(res.Findings, f)
	}
	sort.SliceStable(res.Findings, func(i, j int) bool {
		return res.Findings[i].Spans[0].Start.Before(res.Findings[j].Spans[0].Start)
	})
	return res
}

func short(d string) string {
	if len(d) > 24 {
		return d[:24] + "…"
	}
	return d
}

func shortSite(site string) string {
	if i := strings.LastIndex(site, "/"); i >= 0 {
		return site[i+1:]
	}
	return site
}
