package runtime

import (
	"bytes"
	"encoding/json"
	"strings"
)

// A Setup that makes a fresh world for each scenario may name it afresh: a
// new tenant, a temporary directory, the next serial id of a shared
// database. The scenario's identities and arguments then differ from the
// baseline's in those names, and every check that looks a scenario's write
// up in the baseline by its identity found nothing: the state one execution
// changes in the baseline (a correct "set" run twice at once was counted
// twice), whether a changed identity is the baseline's own next piece of
// work (a sweep over documents was a retry with a fresh key), whether the
// baseline's writes took effect (ExactlyOnce saw all of them dropped).
//
// A renaming says which values of the baseline stand for which of the
// scenario's. It is learned from the calls the first delivery made before
// the scenario's fault, which are the baseline's calls made in another
// world: a call is paired with the baseline's call of the same op and
// occurrence, and where their identities or arguments differ at the same
// place, the baseline's value is the scenario's. A value is renamed only
// when nothing of the scenario carries it and nothing of the baseline
// carries its new name, and one for one: an agent that makes the
// baseline's calls in another order (ranging over a map) keeps its names,
// and a key made afresh for each attempt renames only the first attempt's.
type renaming map[string]string // a leaf's canonical JSON in the baseline → in the scenario

// baselineNames is what learnRenaming reads of the baseline, made once per
// suite: its first delivery's calls by op and occurrence, and (when a
// scenario's calls differ from them) every scalar value of its identities
// and arguments.
type baselineNames struct {
	base   *Trace
	calls  map[opAt]*Operation
	byID   map[[2]string]*Operation // by op and identity
	writes map[[2]string]bool       // every write's op and identity
	vals   map[string]bool
}

type opAt struct {
	name string
	occ  int
}

func (n *baselineNames) of(base *Trace) *baselineNames {
	if n.base != base {
		*n = baselineNames{base: base, calls: map[opAt]*Operation{}, byID: map[[2]string]*Operation{}, writes: map[[2]string]bool{}}
		for i := range base.Ops {
			o := &base.Ops[i]
			if o.Kind == KindWrite {
				n.writes[[2]string{o.Name, o.Identity}] = true
			}
			if o.Invocation == 1 && o.Parent == "" {
				n.calls[opAt{o.Name, o.Occurrence}] = o
				n.byID[[2]string{o.Name, o.Identity}] = o
			}
		}
	}
	return n
}

func (n *baselineNames) values() map[string]bool {
	if n.vals == nil {
		n.vals = traceLeaves(n.base)
	}
	return n.vals
}

// learnRenaming returns the renaming from the baseline base to the scenario
// of tr, nil when the scenario keeps the baseline's names. Most scenarios
// make the baseline's calls before their fault: they cost a lookup per
// call, and no encoding.
func learnRenaming(names *baselineNames, base, tr *Trace) renaming {
	if base == nil || tr == nil {
		return nil
	}
	bn := names.of(base)
	// The first delivery's calls up to its first faulted call (included:
	// its arguments were the agent's before the fault).
	last := -1
	for i := range tr.Ops {
		if o := &tr.Ops[i]; o.Fault != "" && o.Invocation == 1 && (last < 0 || o.Seq < last) {
			last = o.Seq
		}
	}
	var pairs [][2]*Operation
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Invocation != 1 || o.Parent != "" || last >= 0 && o.Seq > last {
			continue
		}
		b, ok := bn.calls[opAt{o.Name, o.Occurrence}]
		if !ok || b.Identity == o.Identity && sameArgs(b.Args, o.Args) {
			continue
		}
		if x, ok := bn.byID[[2]string{o.Name, o.Identity}]; ok && sameArgs(x.Args, o.Args) {
			continue // a call of the baseline's, in another order
		}
		pairs = append(pairs, [2]*Operation{b, o})
	}
	if len(pairs) == 0 {
		return nil
	}
	// A value found where the baseline had another is renamed only if
	// the baseline never carries it (a name of the scenario's world, not
	// another of the baseline's, as when calls come in another order),
	// and the scenario never carries the baseline's.
	//
	// The names the sink answered are paired as it answered them: each
	// with the one it answered the same call in the baseline
	// (sinkRenaming), whatever the calls' order. Two goroutines adding one
	// line to each of two orders, under the order's random id, call in
	// either order, and the first delivery's add_line#1 was the apple's
	// here and the pear's in the baseline. Paired by occurrence, the pear
	// order's id read as the apple order's, the baseline's windows were
	// looked up under the other order's line, and two deliveries at once
	// of a correct agent were a duplicate_write about half the runs (red
	// team, /tmp/rt29 s1 TestServerID).
	var scenVals map[string]bool
	m := renaming{}
	taken := map[string]string{} // the scenario's value → the baseline's
	bad := map[string]bool{}
	sink := map[string]bool{} // the baseline's values paired by the sink's answers
	for x, y := range sinkRenaming(tr, base) {
		bv, sv := encode(y), encode(x)
		m[bv], taken[sv], sink[bv] = sv, bv, true
	}
	for _, p := range pairs {
		bl, sl := callLeaves(p[0]), callLeaves(p[1])
		for path, bv := range bl {
			sv, ok := sl[path]
			if !ok || sv == bv || defaultValue(bv) || defaultValue(sv) || bn.values()[sv] {
				continue
			}
			if scenVals == nil {
				scenVals = traceLeaves(tr)
			}
			if scenVals[bv] || sink[bv] || sink[taken[sv]] {
				continue // the sink's pairs stand
			}
			if prev, ok := m[bv]; ok && prev != sv || taken[sv] != "" && taken[sv] != bv {
				bad[bv], bad[taken[sv]] = true, true
				continue
			}
			m[bv], taken[sv] = sv, bv
		}
	}
	for bv := range bad {
		delete(m, bv)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// sameArgs reports whether two calls' arguments encode alike, comparing
// scalars without encoding them (this runs for every call before a fault).
func sameArgs(a, b Args) bool {
	if len(a.Values) != len(b.Values) {
		return false
	}
	for i, v := range a.Values {
		w := b.Values[i]
		var same bool
		switch x := v.(type) {
		case string:
			same = equalAs(x, w)
		case int:
			same = equalAs(x, w)
		case int64:
			same = equalAs(x, w)
		case bool:
			same = equalAs(x, w)
		case json.RawMessage:
			// An argument recorded at Begin by its JSON (args.go):
			// equal bytes encode alike without encoding them again.
			y, ok := w.(json.RawMessage)
			same = ok && bytes.Equal(x, y) || jsonEqual(v, w)
		default:
			same = jsonEqual(v, w)
		}
		if !same {
			return false
		}
	}
	return true
}

// jsonEqual reports whether v and w both encode, and to the same JSON.
func jsonEqual(v, w any) bool {
	ea, erra := json.Marshal(v)
	eb, errb := json.Marshal(w)
	return erra == nil && errb == nil && string(ea) == string(eb)
}

// equalAs reports whether y holds a T equal to x.
func equalAs[T comparable](x T, y any) bool {
	v, ok := y.(T)
	return ok && v == x
}

// callLeaves returns a call's identity and arguments flattened into their
// scalar values by place.
func callLeaves(o *Operation) map[string]string {
	out := map[string]string{}
	for p, v := range argLeaves(o) {
		out["args"+p] = v
	}
	for p, v := range jsonLeaves(o.Identity) {
		out["identity"+p] = v
	}
	return out
}

// traceLeaves returns every scalar value of a trace's identities and
// arguments.
func traceLeaves(tr *Trace) map[string]bool {
	out := map[string]bool{}
	for i := range tr.Ops {
		for _, v := range callLeaves(&tr.Ops[i]) {
			out[v] = true
		}
	}
	return out
}

// jsonLeaves flattens canonical JSON into its scalar values by path, each
// encoded as JSON; nil when s is not JSON.
func jsonLeaves(s string) map[string]string {
	if s == "" {
		return nil
	}
	v, ok := decodeNumbers(s)
	if !ok {
		return nil
	}
	out := map[string]string{}
	walkLeaves("", v, func(path string, leaf any) {
		b, _ := json.Marshal(leaf)
		out[path] = string(b)
	})
	return out
}

func decodeNumbers(s string) (any, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

func walkLeaves(path string, v any, fn func(path string, leaf any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkLeaves(path+"."+k, e, fn)
		}
	case []any:
		for i, e := range x {
			walkLeaves(path+"."+itoa(i), e, fn)
		}
	default:
		fn(path, x)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// json rewrites s, JSON of the baseline (an identity, arguments), in the
// scenario's names: each scalar value (not an object's key) whose text is
// a renamed value's. Nothing else of s changes, the order of an object's
// names included.
func (m renaming) json(s string) string {
	if len(m) == 0 || s == "" {
		return s
	}
	var b strings.Builder
	changed := false
	put := func(tok string, key bool) {
		if to, ok := m[tok]; ok && !key {
			if !changed {
				b.Grow(len(s) + 16)
				changed = true
			}
			b.WriteString(to)
			return
		}
		b.WriteString(tok)
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return s // not JSON
			}
			j++
			k := j
			for k < len(s) && (s[k] == ' ' || s[k] == '\n' || s[k] == '\t' || s[k] == '\r') {
				k++
			}
			put(s[i:j], k < len(s) && s[k] == ':')
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			put(s[i:j], false)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	if !changed {
		return s
	}
	return b.String()
}

// identity rewrites a baseline identity in the scenario's names.
func (m renaming) identity(id string) string { return m.json(id) }

// windows rewrites the keys of the baseline's windows (op, identity and
// arguments: windows) in the scenario's names.
func (m renaming) windows(w map[string][2]string) map[string][2]string {
	if len(m) == 0 {
		return w
	}
	out := make(map[string][2]string, len(w))
	for k, v := range w {
		parts := strings.SplitN(k, "\x00", 4) // op, identity, arguments, #n
		if len(parts) >= 3 {
			parts[1], parts[2] = m.json(parts[1]), m.json(parts[2])
			k = strings.Join(parts, "\x00")
		}
		out[k] = v
	}
	return out
}
