package runtime

import (
	"encoding/json"
	"strconv"
	"strings"
)

// A value the sink draws afresh for each row it makes: an api_token
// DEFAULT md5(random()::text), a uuid from gen_random_uuid() in a column
// not named id, an invite code of random bytes in base64url. Each run
// draws its own, and compared across runs (what two deliveries at once
// left against what one execution left in the baseline) the baseline's
// token against the run's read as a change: a correct create-if-absent
// (INSERT ... ON CONFLICT (email) DO NOTHING) was a duplicate_write in
// duplicate_delivery/concurrent on every run, where the same table with
// the random value under the name id was SAFE (red team, /tmp/rtM P8
// TestUUIDtoken, 4/4). Running the baseline twice and leaving out what
// differed between the two hid a counter that Setup does not reset and
// a detached context's finding (branch fE2, 1fad4fb, reverted): so the
// runs are not repeated, and a pair of values is taken for the sink's
// draw by what the pair looks like.
//
// freshTokens pairs the run's tokens with the baseline's at one place of
// the two snapshots (an object's key; in a list, the entries that are
// the same but for their tokens), where both are random-looking tokens
// of one shape (freshPair) that no call of either run was given or
// answered (the agent chose or saw it, and it means what it says: a
// rotate_token that answers the new token, a token the agent passes on).
// The pairs read the run's tokens in the baseline's, as the names the
// sink answered are (sinkRenaming), and only for comparisons across runs:
// within a run, a repeat that draws a new token (a rotation) changed the
// state, and is judged by that. What stays different: a second row (it
// has no partner), a count, a title or an amount (no token), a token a
// call answered, and two tokens of a run where the baseline had one.

// minToken is the shortest string taken for a token: 16 characters, 8
// random bytes in hex, 64 bits; an 8-character invite code, which words
// and numbers share the shape of, is data.
const minToken = 16

// maxToken bounds a token: a longer string (a JWT, a document) is data.
const maxToken = 256

// freshTokens returns the pairs of tokens (freshPair) that the snapshots
// run and base hold at one place, the run's token to the baseline's, one
// to one (a token paired with two is paired with none); nil when there
// are none or either does not decode. named says whether a text was
// given to or answered by a call (tokenTexts).
func freshTokens(run, base string, named func(string) bool) map[string]string {
	if run == "" || base == "" || run == base || !mayHoldToken(run) {
		return nil
	}
	r, err := decodeState(run)
	if err != nil {
		return nil
	}
	b, err := decodeState(base)
	if err != nil {
		return nil
	}
	p := tokenPairing{named: named, to: map[string]string{}, from: map[string]string{}, bad: map[string]bool{}}
	p.walk(r, b)
	for x, y := range p.to {
		if x == y || p.bad[x] || p.bad[y] {
			delete(p.to, x)
		}
	}
	if len(p.to) == 0 {
		return nil
	}
	return p.to
}

// mayHoldToken reports whether snapshot s holds a run of token characters
// as long as a token: a quick look before freshTokens decodes it.
func mayHoldToken(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if tokenChar(s[i]) {
			if n++; n >= minToken {
				return true
			}
			continue
		}
		n = 0
	}
	return false
}

type tokenPairing struct {
	named    func(string) bool
	to, from map[string]string // the run's token → the baseline's, and back
	bad      map[string]bool   // tokens paired with two
}

// walk pairs the tokens of x (the run's) and y (the baseline's) at one
// place: objects key by key; lists entry by entry, each entry of x with
// the first of y not yet taken that is the same once tokens are left
// out (skeleton), so that rows listed by their token, in another order
// on each run, still pair by what else they hold.
func (p *tokenPairing) walk(x, y any) {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return
		}
		for k, e := range xv {
			if f, ok := yv[k]; ok {
				p.walk(e, f)
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok {
			return
		}
		if len(xv) == 1 && len(yv) == 1 {
			p.walk(xv[0], yv[0])
			return
		}
		sy := make([]string, len(yv))
		for j, e := range yv {
			sy[j] = encode(p.skeleton(e))
		}
		taken := make([]bool, len(yv))
		for _, e := range xv {
			s := encode(p.skeleton(e))
			for j := range yv {
				if !taken[j] && sy[j] == s {
					taken[j] = true
					p.walk(e, yv[j])
					break
				}
			}
		}
	case string:
		yv, ok := y.(string)
		if !ok {
			return
		}
		if xv == yv {
			if p.tokenLike(xv) {
				p.pair(xv, yv) // kept: no other token of the run is read as it
			}
			return
		}
		if freshPair(xv, yv) && !p.named(xv) && !p.named(yv) {
			p.pair(xv, yv)
			return
		}
		if tx, ty, ok := embeddedPair(xv, yv); ok && !p.named(xv) && !p.named(yv) && !p.named(tx) && !p.named(ty) {
			p.pair(xv, yv)
		}
	}
}

func (p *tokenPairing) pair(x, y string) {
	if t, ok := p.to[x]; ok && t != y {
		p.bad[x], p.bad[t] = true, true
	}
	if f, ok := p.from[y]; ok && f != x {
		p.bad[y], p.bad[f] = true, true
	}
	p.to[x], p.from[y] = y, x
}

// tokenLike reports whether s, alone, may be a token: of a token's length
// and alphabet, varied, and not named. What a pair must show besides
// (freshPair: a digit, both cases) is not asked of one draw, which may
// lack it by chance: rows are matched on what else they hold.
func (p *tokenPairing) tokenLike(s string) bool {
	return len(s) >= minToken && len(s) <= maxToken && tokenAlphabet(s, s, false) != "" && varied(s) && !p.named(s)
}

// skeleton returns v with every string that may be a token (tokenLike)
// replaced by its length.
func (p *tokenPairing) skeleton(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = p.skeleton(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = p.skeleton(e)
		}
		return out
	case string:
		if p.tokenLike(x) {
			return "\x00token " + strconv.Itoa(len(x))
		}
		return p.maskEmbedded(x)
	}
	return v
}

// maskEmbedded returns s with each run of token characters in it that may
// be a token (tokenLike), bounded by characters no token holds, replaced
// by its length: the draw inside a Message-ID (embeddedPair).
func (p *tokenPairing) maskEmbedded(s string) string {
	if len(s) <= minToken || len(s) > 4*maxToken || !mayHoldToken(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !tokenChar(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && tokenChar(s[j]) {
			j++
		}
		if run := s[i:j]; (i > 0 || j < len(s)) && p.tokenLike(run) {
			b.WriteString(s[last:i])
			b.WriteString("\x00token " + strconv.Itoa(len(run)) + "\x00")
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// embeddedPair reports whether x and y, which differ, are one text around
// two draws of one token (freshPair), and returns the two: the Message-ID
// a mail relay stamps on each mail, "<523d9e1740092d48@relay.example>".
// Taken whole, the two shared half their characters and held characters
// no token does, and the end of a correct outbox's run, against the
// baseline's, read as a change no traced call made: inconclusive on every
// run (red team rS #5, probe/mail TestOutbox/keyed_relayrandommid). The
// text they share ends at characters no token holds, so that what two
// draws share by chance at their ends stays in the tokens; the tokens are
// one run of token characters each.
func embeddedPair(x, y string) (tx, ty string, ok bool) {
	if x == y || len(x) != len(y) || len(x) > 4*maxToken {
		return "", "", false
	}
	i := 0
	for i < len(x) && x[i] == y[i] {
		i++
	}
	for i > 0 && tokenChar(x[i-1]) {
		i--
	}
	j := len(x)
	for j > i && x[j-1] == y[j-1] {
		j--
	}
	for j < len(x) && tokenChar(x[j]) {
		j++
	}
	if i == 0 && j == len(x) {
		return "", "", false // the whole text: freshPair's to judge
	}
	tx, ty = x[i:j], y[i:j]
	for k := 0; k < len(tx); k++ {
		if !tokenChar(tx[k]) || !tokenChar(ty[k]) {
			return "", "", false
		}
	}
	return tx, ty, freshPair(tx, ty)
}

// freshPair reports whether x and y, which differ, read as two draws of
// one random token: of one length (minToken to maxToken), of one token
// alphabet (tokenAlphabet) that one of them shows alone, neither made of
// a few characters (varied), and
// differing in more than half the places. A counter, a version or a
// moment written as text differs in a few places; a word, a slug or a
// SCREAMING_CASE status is no token's alphabet.
func freshPair(x, y string) bool {
	if x == y || len(x) != len(y) || len(x) < minToken || len(x) > maxToken {
		return false
	}
	// The alphabet of both is the alphabet one of them shows alone: a
	// draw may lack a character of its alphabet (a base64url token with
	// no - or _), but two hex digests, one in lower case and one in
	// upper, are two alphabets, not one of letters of both cases.
	a := tokenAlphabet(x, y, true)
	if a == "" || a != tokenAlphabet(x, x, false) && a != tokenAlphabet(y, y, false) || !varied(x) || !varied(y) {
		return false
	}
	same := 0
	for i := 0; i < len(x); i++ {
		if x[i] == y[i] {
			same++
		}
	}
	return 2*same < len(x)
}

// varied reports whether s holds at least a quarter as many distinct
// characters as it is long (16 hex digits drawn at random hold 10 on
// average, and fewer than 4 about once in 10^9 draws): not a padding of
// one character with a number at its end.
func varied(s string) bool {
	var seen [256]bool
	n := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			n++
		}
	}
	return 4*n >= len(s)
}

// tokenAlphabet returns the narrowest alphabet random tokens are written
// in that holds every character of x and y, "" when none does, or, where
// strict, when what x and y hold is not what two draws of such tokens
// show:
//
//   - "digits", "hex" (one case), "uuid" (8-4-4-4-12 hex): any;
//   - "base32" (A-Z, 2-7, = padding; or lower case), "base36" (one case
//     and digits): a digit in x or y, which words glued together have
//     not (letters only, in both draws of 26 characters, about once in
//     50 000);
//   - "base62", "base64url" (letters, digits, - and _), "base64" (+, /,
//     =): letters of both cases in x or y, which a slug (buy-milk-and-
//     eggs) and a SCREAMING_CASE status have not.
func tokenAlphabet(x, y string, strict bool) string {
	var lower, upper, digit, low27, dash, under, plus, slash, eq, other bool
	for _, s := range [2]string{x, y} {
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c >= 'a' && c <= 'z':
				lower = true
			case c >= 'A' && c <= 'Z':
				upper = true
			case c >= '0' && c <= '9':
				digit = true
				if c <= '1' || c >= '8' {
					low27 = true // outside base32's 2-7
				}
			case c == '-':
				dash = true
			case c == '_':
				under = true
			case c == '+':
				plus = true
			case c == '/':
				slash = true
			case c == '=':
				eq = true
			default:
				other = true
			}
		}
	}
	hexOnly := func(s string, dashes bool) bool {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if dashes && c == '-' {
				continue
			}
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	oneCase := !(lower && upper)
	switch {
	case other:
		return ""
	case !lower && !upper && !dash && !under && !plus && !slash && !eq:
		return "digits"
	case oneCase && !dash && !under && !plus && !slash && !eq && hexOnly(x, false) && hexOnly(y, false):
		return "hex"
	case dash && !under && !plus && !slash && !eq && uuidLike(x) && uuidLike(y) && hexOnly(x, true) && hexOnly(y, true):
		return "uuid"
	case oneCase && !low27 && !dash && !under && !plus && !slash:
		if strict && !digit {
			return ""
		}
		return "base32"
	case oneCase && !dash && !under && !plus && !slash && !eq:
		if strict && !digit {
			return ""
		}
		return "base36"
	case oneCase:
		return "" // a slug, a status
	case !dash && !under && !plus && !slash && !eq:
		return "base62"
	case !plus && !slash && !eq:
		return "base64url"
	case !dash && !under:
		return "base64"
	}
	return ""
}

// uuidLike reports whether s has a UUID's shape: 36 characters, dashes
// after the 8th, 12th, 16th and 20th.
func uuidLike(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (i == 8 || i == 13 || i == 18 || i == 23) != (s[i] == '-') {
			return false
		}
	}
	return true
}

func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_+/=", c) >= 0
}

// tokenTexts returns a test of whether a text was given to a call of one
// of trs (its arguments and identity) or answered by one (its result),
// whole or inside a longer string: a token the agent saw or chose is
// never taken for the sink's draw (freshTokens). The traces are read on
// the test's first use, and each text's answer kept.
func tokenTexts(trs ...*Trace) func(string) bool {
	var set, seen map[string]bool
	var long []string
	read := func() {
		set, seen = map[string]bool{}, map[string]bool{}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					walk(k)
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case string:
				if len(x) >= minToken && !set[x] {
					set[x] = true
					long = append(long, x)
				}
			}
		}
		decode := func(s string) {
			if v, err := decodeState(s); err == nil {
				walk(v)
			}
		}
		for _, tr := range trs {
			if tr == nil {
				continue
			}
			for i := range tr.Ops {
				o := &tr.Ops[i]
				decode(argsKey(o))
				decode(o.Identity)
				if o.Result != nil {
					if b, err := json.Marshal(o.Result); err == nil {
						decode(string(b))
					}
				}
			}
		}
	}
	return func(s string) bool {
		if set == nil {
			read()
		}
		if set[s] {
			return true
		}
		named, ok := seen[s]
		if !ok {
			for _, l := range long {
				if len(l) > len(s) && strings.Contains(l, s) {
					named = true
					break
				}
			}
			seen[s] = named
		}
		return named
	}
}

// withFreshTokens returns rename (the names the sink answered, the run's
// to the baseline's) with the tokens the run's end and the baseline's
// hold at one place (freshTokens) added, where neither side of a pair is
// in it already.
func withFreshTokens(rename map[string]string, end, baseEnd string, tr, base *Trace) map[string]string {
	toks := freshTokens(end, baseEnd, tokenTexts(tr, base))
	if len(toks) == 0 {
		return rename
	}
	out := make(map[string]string, len(rename)+len(toks))
	from := make(map[string]bool, len(rename))
	for x, y := range rename {
		out[x], from[y] = y, true
	}
	for x, y := range toks {
		if _, ok := out[x]; ok || from[y] {
			continue
		}
		out[x], from[y] = y, true
	}
	return out
}
