package runtime

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/internal/jsonnum"
)

// redactedText replaces a redacted value wherever it shows up in a report.
const redactedText = "[redacted]"

// minSecret is the shortest text of a redacted value that is searched for:
// shorter ones ("0", "ok") would blank unrelated text all over the report.
const minSecret = 3

// Redact hands the runtime the values of the call's redacted parameters
// (redact=), in any order. They are never recorded: the runtime keeps them
// in memory for the scenario, to blank them ("[redacted]") wherever else
// they show up in its result — the tool's result and error text, the
// agent's error, findings, panics, invariant messages — so that neither
// the JSON report nor its text and HTML renderings carry them. Outside a
// run, an Observer is told the call redacts (ObservedCall.Redacts). A value is
// searched for as its text (a string, a number) and, for a struct, map or
// slice, as each string and number inside it; texts of fewer than three
// characters are not searched for. A number (an int, a float64, a
// json.Number) is searched for under each text a tool may write it as:
// its JSON literal, its exact decimal digits when it is an integer
// however written (1.2345678901234567891e19), and its float64 as
// encoding/json and fmt's %v write it (12345678901234567000,
// 1.2345678901234567e+19), which a tool that decoded it into a float64
// echoes.
//
// Redact is called only by generated code, right after Begin.
func (c *Call) Redact(vals ...any) {
	if len(vals) == 0 {
		return
	}
	if c.obs != nil {
		// Outside a run: the observer withholds the error text.
		c.obs.call.Redacts = true
	}
	if c.inv == nil {
		return
	}
	c.inv.rec.secrets.add(vals...)
}

// A secretSet holds redacted values: a recorder's, seen by its scenario's
// calls, until the scenario's result is scrubbed; a suite's, those of every
// scenario, since a value seen once may show up in a later scenario's text.
// They live with their recorder and suite, and go when those do.

type secretSet struct {
	mu    sync.Mutex
	texts map[string]bool
}

func (s *secretSet) add(vals ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = map[string]bool{}
	}
	for _, v := range vals {
		for _, t := range secretTexts(v) {
			if len(t) >= minSecret {
				s.texts[t] = true
			}
		}
	}
}

func (s *secretSet) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.texts) == 0 {
		// Most agents redact nothing, and each scenario asks twice (its
		// recorder's set, the suite's): an empty list sorted by
		// sort.Slice still cost two allocations (the boxed slice, the
		// closure) and 2% of the ten-write suite's CPU profile.
		return nil
	}
	out := make([]string, 0, len(s.texts))
	for t := range s.texts {
		out = append(out, t)
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// secretTexts returns the texts under which v can show up: itself for a
// string or number, else every string and number leaf of its JSON.
func secretTexts(v any) []string {
	switch x := v.(type) {
	case nil, bool, redacted:
		return nil
	case string:
		return []string{x}
	case []byte:
		return []string{string(x)}
	case json.Number:
		return numberTexts(x)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&generic) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, numberTexts(x)...)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(generic)
	return out
}

// numberTexts returns the texts under which the number n, a JSON literal,
// can show up in a tool's text: the literal; the decimal digits of its
// exact value when that is an integer written otherwise (1.5e3, 1500.0:
// a tool that decoded it exactly, into a json.Number normalised or a
// big.Int, writes those); and, since most decoders give a float64 (a
// value of 2^53 or more rounded), that float64 as encoding/json writes it
// (12345678901234567000, 1e+21) and as fmt's %v and strconv's shortest
// 'g' write it (1.2345678901234567e+19, 1e+06).
func numberTexts(n json.Number) []string {
	s := n.String()
	out := []string{s}
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if d, ok := jsonnum.IntegerDigits(s); ok {
		add(d)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return out
	}
	if b, err := json.Marshal(f); err == nil {
		add(string(b))
	}
	add(strconv.FormatFloat(f, 'g', -1, 64))
	return out
}

// redactResult blanks the redacted values of the scenario recorded by r,
// and of the suite's earlier scenarios, everywhere in res.
func (s *Suite) redactResult(res *Result, r *recorder) {
	suite := &s.secrets
	if r != nil {
		if own := r.secrets.list(); len(own) > 0 {
			suite.add(anyList(own)...)
		}
	}
	secrets := suite.list()
	if len(secrets) == 0 || res == nil {
		return
	}
	scrubValue(reflect.ValueOf(res), secrets)
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// scrubValue walks the exported fields of the runtime's own types, blanking
// secrets in strings and replacing each interface value (a tool's result, an
// argument) that holds one by a scrubbed copy: the tool's own objects are
// never changed.
func scrubValue(v reflect.Value, secrets []string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scrubValue(v.Elem(), secrets)
		}
	case reflect.Struct:
		t := v.Type()
		if t.PkgPath() != "" && t.PkgPath() != reflect.TypeOf(Result{}).PkgPath() {
			return // time.Time and other foreign structs hold no trace text
		}
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				scrubValue(v.Field(i), secrets)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			scrubValue(v.Index(i), secrets)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			switch e.Kind() {
			case reflect.String:
				v.SetMapIndex(k, reflect.ValueOf(scrubString(e.String(), secrets)).Convert(e.Type()))
			case reflect.Interface:
				if !e.IsNil() {
					v.SetMapIndex(k, reflect.ValueOf(scrubAny(e.Interface(), secrets)))
				}
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(scrubString(v.String(), secrets))
		}
	case reflect.Interface:
		if v.CanSet() && !v.IsNil() {
			if out := scrubAny(v.Interface(), secrets); out != nil {
				v.Set(reflect.ValueOf(out))
			}
		}
	}
}

func scrubString(s string, secrets []string) string {
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, redactedText)
		}
	}
	return s
}

// scrubAny returns v, or a JSON-shaped copy of it with every secret
// blanked when one shows up in it.
func scrubAny(v any, secrets []string) any {
	switch x := v.(type) {
	case string:
		return scrubString(x, secrets)
	case redacted, bool, nil:
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	hit := false
	for _, sec := range secrets {
		enc, _ := json.Marshal(sec)
		if bytes.Contains(raw, enc[1:len(enc)-1]) {
			hit = true
			break
		}
	}
	if !hit {
		return v
	}
	var generic any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&generic) != nil {
		return redactedText
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			return scrubString(x, secrets)
		case json.Number:
			for _, sec := range secrets {
				if x.String() == sec {
					return redactedText
				}
			}
			if _, err := strconv.ParseFloat(x.String(), 64); err == nil && scrubString(x.String(), secrets) != x.String() {
				return redactedText
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			return x
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[scrubString(k, secrets)] = walk(e)
			}
			return out
		}
		return x
	}
	return walk(generic)
}
