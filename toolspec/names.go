package toolspec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentidem/agentidem-go/internal/editdist"
)

// Misspelt returns an error naming each key of t that misspells one of
// names (the tools a framework serves), with the tool it misspells, or
// nil. A key misspells a tool when it names none of names while the tool,
// which no key names, is spelt nearly like it (Nearest): "bookRoom" for
// book_room. Such a key fails silently: the tool it meant is served
// without a Spec, untraced, so the suite never faults it and may pass an
// agent it never tested. A key that names no tool and is near none of the
// unnamed ones is not an error: one Tools map may describe the tools of
// several agents, each of which serves some of them.
func (t Tools) Misspelt(names []string) error {
	m := t.Misspellings(names)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%q names no tool (did you mean %q?)", k, m[k]))
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("Tools key %s: a tool that no key names is not traced, never faulted, and the suite cannot see it", strings.Join(parts, "; "))
}

// Misspellings maps each key of t that misspells one of names (see
// Misspelt) to the tool it misspells; nil when none does. Adapters that
// learn the tools a server serves only when it serves them (an MCP
// server's list) check each call of a tool without a key against it.
func (t Tools) Misspellings(names []string) map[string]string {
	var unnamed []string
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
		if _, ok := t[n]; !ok {
			unnamed = append(unnamed, n)
		}
	}
	var out map[string]string
	for k := range t {
		if have[k] {
			continue
		}
		if near := Nearest(k, unnamed); near != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = near
		}
	}
	return out
}

// Nearest returns the name in names that key most likely misspells, or ""
// when none is close: compared without case and without the separators
// _ - . and space (bookRoom, book_room and Book-Room are one), a name at
// an edit distance of at most a third of key's length (one edit for a
// short name). Of equally near names, the one nearest as spelt, then the
// first in order, wins.
func Nearest(key string, names []string) string {
	nk := fold(key)
	limit := max(1, len([]rune(nk))/3)
	best, bestD, bestRaw := "", limit+1, 0
	for _, n := range names {
		d := editdist.Distance(nk, fold(n))
		if d > limit {
			continue
		}
		raw := editdist.Distance(key, n)
		if d < bestD || d == bestD && (raw < bestRaw || raw == bestRaw && n < best) {
			best, bestD, bestRaw = n, d, raw
		}
	}
	return best
}

// fold is s in lower case, without the separators _ - . and space.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(s))
}
