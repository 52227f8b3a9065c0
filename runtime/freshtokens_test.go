package runtime

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tokens as sinks draw them afresh for each row: PostgreSQL's
// md5(random()::text), gen_random_uuid() in a column not named id, an
// invite code of 16 random bytes in base64url, a base32 secret.
var tokenShapes = map[string]func() string{
	"md5 hex": func() string {
		var b [8]byte
		rand.Read(b[:])
		s := md5.Sum(b[:])
		return hex.EncodeToString(s[:])
	},
	"uuid": func() string {
		var b [16]byte
		rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	},
	"base64url": func() string {
		var b [16]byte
		rand.Read(b[:])
		return base64.RawURLEncoding.EncodeToString(b[:])
	},
	"base32": func() string {
		var b [20]byte
		rand.Read(b[:])
		return base32.StdEncoding.EncodeToString(b[:])
	},
	// A mail relay's Message-ID: a draw inside a text (embeddedPair;
	// red team rS #5).
	"message id": func() string {
		var b [8]byte
		rand.Read(b[:])
		return "<" + hex.EncodeToString(b[:]) + "@relay.example>"
	},
}

// drawnPair is how tokenPairing.walk reads two texts at one place: two
// draws of one token, whole or inside one text.
func drawnPair(x, y string) bool {
	if freshPair(x, y) {
		return true
	}
	_, _, ok := embeddedPair(x, y)
	return ok
}

// registerAgent registers a@x, retried once on an error, in a world whose
// account rows get a token the sink draws (token) as a column DEFAULT
// does. mode: "if absent" (INSERT ... ON CONFLICT (email) DO NOTHING),
// "naive" (a second row), "count" (the row's logins n go up on each call),
// "rotate" (an upsert that draws a new token on each call: ON CONFLICT
// DO UPDATE SET api_token = DEFAULT), "rotate, answered" (the same,
// RETURNING the token, which the call answers).
func registerAgent(w *kvWorld, mode string, token func() string) func(context.Context) error {
	reg := &Op{Name: "register", Kind: KindWrite, Params: []string{"email"}}
	meet := &rendezvous{timeout: 10 * time.Millisecond} // two deliveries at once overlap, as on a database
	return func(ctx context.Context) error {
		call := func() (err error) {
			if !Enabled() {
				panic("not in a run")
			}
			c, cctx := Begin(ctx, reg, []any{"a@x"}, []any{"a@x"}, nil)
			if err = c.Start(); err != nil {
				return err
			}
			defer c.Recover(&err)
			_ = cctx
			meet.wait()
			var tok string
			_ = w.do(func(m map[string]any) {
				l, _ := m["accounts"].([]any)
				i := slices.IndexFunc(l, func(r any) bool { return r.(map[string]any)["email"] == "a@x" })
				switch {
				case i < 0 || mode == "naive":
					tok = token()
					m["accounts"] = append(l, map[string]any{"email": "a@x", "api_token": tok, "n": 1.0})
				case mode == "count":
					r := l[i].(map[string]any)
					r["n"] = r["n"].(float64) + 1
				case strings.HasPrefix(mode, "rotate"):
					tok = token()
					l[i].(map[string]any)["api_token"] = tok
				}
			})
			var results []any
			if mode == "rotate, answered" {
				results = []any{tok}
			}
			if lost := c.Finish(nil, results...); lost != nil {
				return lost
			}
			return nil
		}
		if err := call(); err != nil && ctx.Err() == nil {
			return call()
		}
		return nil
	}
}

func TestCreateIfAbsentWithARandomTokenIsNoDuplicate(t *testing.T) {
	all := []string{ScenarioCrashRestart + "/register#1", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq, ScenarioLostAck + "/register#1"}
	for shape, token := range tokenShapes {
		for _, tc := range []struct {
			mode string
			want []string
		}{
			{"if absent", nil},
			{"naive", all},
			{"count", all},
		} {
			w := &kvWorld{}
			rep := runOn(t, w, nil, registerAgent(w, tc.mode, token))
			if got := dupScenarios(rep); !slices.Equal(got, tc.want) {
				t.Errorf("%s, %s: duplicate_write in %v, want %v", shape, tc.mode, got, tc.want)
				for _, f := range rep.Findings {
					t.Logf("%s: %s", f.Scenario, f.Message)
				}
			}
		}
	}
}

// A rotation that draws a new token on every call is not idempotent,
// and leaving the sink's draws out of comparisons across runs must not
// hide it. Where one delivery's repeat is seen alone (a lost
// acknowledgement, a crash, a second delivery after the first), its own
// window shows the token it replaced: a duplicate, as before. Where two
// deliveries overlapped, what they left (one account, one token no one
// saw) is what one registration left in the baseline, and the state
// holds nothing that tells one draw from two: that scenario forgives it,
// as it forgives the create. Where the call answers the token, the
// agent saw it, and it is never taken for the sink's draw: two
// deliveries at once left another token than the one the first was
// answered, and the concurrent delivery says so too.
func TestRotatingATokenIsStillADuplicate(t *testing.T) {
	seen := []string{ScenarioCrashRestart + "/register#1", ScenarioDuplicateSeq, ScenarioLostAck + "/register#1"}
	all := []string{ScenarioCrashRestart + "/register#1", ScenarioDuplicateConcurrent, ScenarioDuplicateSeq, ScenarioLostAck + "/register#1"}
	for shape, token := range tokenShapes {
		for _, tc := range []struct {
			mode string
			want []string
		}{
			{"rotate", seen},
			{"rotate, answered", all},
		} {
			w := &kvWorld{}
			rep := runOn(t, w, nil, registerAgent(w, tc.mode, token))
			if got := dupScenarios(rep); !slices.Equal(got, tc.want) || rep.Safe {
				t.Errorf("%s, %s: duplicate_write in %v, want %v (safe %v)", shape, tc.mode, got, tc.want, rep.Safe)
				for _, f := range rep.Findings {
					t.Logf("%s: %s", f.Scenario, f.Message)
				}
			}
		}
	}
}

// Which pairs of values read as two draws of one token, and which stay
// data: a counter, a moment, a version, a slug, a status, a title, a
// base64 cursor that encodes a count, a short code, a token beside
// something else.
func TestFreshPair(t *testing.T) {
	for shape, token := range tokenShapes {
		for range 200 {
			x, y := token(), token()
			if !drawnPair(x, y) {
				t.Errorf("%s: %q and %q are not two draws", shape, x, y)
			}
		}
	}
	for _, p := range [][2]string{
		{"0000000000000001", "0000000000000002"},                                         // a counter
		{"INV-000000000041", "INV-000000000042"},                                         // an invoice number
		{"2026-12-05T19:58:22.123Z", "2026-12-05T19:58:23.456Z"},                         // moments
		{"20261205195822123456", "20261205195823987654"},                                 // a compact moment
		{"buy-milk-and-eggs", "call-the-plumber!"},                                       // slugs (and a !)
		{"buy-milk-and-eggs", "pay-the-gas-bill1"},                                       // slugs of one case
		{"AWAITING_PAYMENT", "REFUND_REQUESTED"},                                         // statuses
		{"Buy milk and eggs", "Call the plumber!"},                                       // titles
		{"eyJwYWdlIjoxLCJzaXplIjoyMH0", "eyJwYWdlIjoyLCJzaXplIjoyMH0"},                   // base64 of {"page":1,...} and 2
		{"X7KQ2M9P", "B3ZR8W1L"},                                                         // a short code
		{"aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb"},                                 // not varied
		{"ABCDEFGHIJKLMNOPQRST", "UVWXYZABCDEFGHIJKLMN"},                                 // letters of one case, no digit
		{"5f4dcc3b5aa765d61d8327deb882cf99", "5f4dcc3b5aa765d61d8327deb882cf9"},          // two lengths
		{"5f4dcc3b5aa765d61d8327deb882cf99", "5f4dcc3b5aa765d61d8327deb882cf99"},         // the same
		{"c4ca4238a0b923820dcc509a6f75849b", "C81E728D9D4C2F636F067F89CC14862C"},         // hex of two cases
		{"f3415b62-4cc3-480d-ab8e-e780f7f69fce", "01ebe0f9c9ba49d5bcf7cd2526a8e9cfcafe"}, // a uuid and hex
		{"order INV-000000000041 shipped", "order INV-000000000042 shipped"},             // a number inside a text
		{"<buy-milk-and-eggs@x>", "<pay-the-gas-bill1@x>"},                               // slugs inside a text
		{"at 2026-12-05T19:58:22.123Z", "at 2026-12-05T19:58:23.456Z"},                   // a moment inside a text
		{"<523d9e1740092d48@relay.example>", "<4c205380baef9f0a@relay.other>"},           // two hosts
	} {
		if drawnPair(p[0], p[1]) {
			t.Errorf("%q and %q read as two draws of one token", p[0], p[1])
		}
	}
}

// A token a call was given or answered, whole or inside a longer text,
// is the agent's: never paired.
func TestFreshTokensLeaveNamedOnesAlone(t *testing.T) {
	x, y := tokenShapes["md5 hex"](), tokenShapes["md5 hex"]()
	run := encode(map[string]any{"accounts": []any{map[string]any{"email": "a@x", "api_token": x}}})
	base := encode(map[string]any{"accounts": []any{map[string]any{"email": "a@x", "api_token": y}}})
	if got := freshTokens(run, base, func(string) bool { return false }); got[x] != y || len(got) != 1 {
		t.Errorf("pairs %v, want %s → %s", got, x, y)
	}
	for _, named := range []string{x, y, "https://example.com/keys/" + x} {
		if got := freshTokens(run, base, func(s string) bool { return strings.Contains(named, s) }); got != nil {
			t.Errorf("%s named: pairs %v", named, got)
		}
	}
	// Rows listed by their token come in another order: paired by what
	// else they hold.
	a1, a2, b1, b2 := tokenShapes["uuid"](), tokenShapes["uuid"](), tokenShapes["uuid"](), tokenShapes["uuid"]()
	run = encode([]any{map[string]any{"email": "a@x", "code": a1}, map[string]any{"email": "b@x", "code": b1}})
	base = encode([]any{map[string]any{"email": "b@x", "code": b2}, map[string]any{"email": "a@x", "code": a2}})
	if got := freshTokens(run, base, func(string) bool { return false }); got[a1] != a2 || got[b1] != b2 || len(got) != 2 {
		t.Errorf("pairs %v, want %s → %s, %s → %s", got, a1, a2, b1, b2)
	}
	// A token a row of the run shares with another (a reference) where
	// the baseline's two rows hold two: paired with neither.
	run = encode([]any{map[string]any{"email": "a@x", "code": a1}, map[string]any{"email": "b@x", "code": a1}})
	if got := freshTokens(run, base, func(string) bool { return false }); got != nil {
		t.Errorf("a token paired with two: %v", got)
	}
}

// Two tags of one post added at once, each row with a token the sink
// draws, in every order the scheduler tries: each schedule's rows hold
// tokens of their own, and the schedules' ends are one world (they were
// concurrent_writes_same_entity on every run), as are their Outcomes,
// which list the same rows (they were an order_variant_outcome). Two
// calls at once that set the post's status to two values, beside such a
// token, still end as the one that landed last.
func TestParallelCreatesWithRandomTokensCommute(t *testing.T) {
	for _, tc := range []struct {
		name     string
		calls    [][2]string // tag, status
		commutes bool
	}{
		{"two tags", [][2]string{{"go", ""}, {"sql", ""}}, true},
		{"one status set to two values", [][2]string{{"go", "held"}, {"go", "released"}}, false},
	} {
		add := &Op{Name: "tag_post", Kind: KindWrite, Params: []string{"post", "tag", "status"}}
		w := &kvWorld{}
		agent := func(ctx context.Context) error {
			var wg sync.WaitGroup
			errs := make([]error, len(tc.calls))
			for i, call := range tc.calls {
				wg.Go(func() {
					c, _ := Begin(ctx, add, []any{"p1", call[0], call[1]}, []any{"p1", call[0], call[1]}, []any{"p1"})
					if errs[i] = c.Start(); errs[i] != nil {
						return
					}
					errs[i] = c.Finish(w.do(func(m map[string]any) {
						l, _ := m["tags"].([]any)
						i := slices.IndexFunc(l, func(r any) bool { return r.(map[string]any)["tag"] == call[0] })
						if i < 0 {
							l = append(l, map[string]any{"post": "p1", "tag": call[0], "token": tokenShapes["base64url"]()})
							slices.SortFunc(l, func(a, b any) int {
								return strings.Compare(a.(map[string]any)["tag"].(string), b.(map[string]any)["tag"].(string))
							})
							m["tags"] = l
						}
						if call[1] != "" {
							m["status"] = call[1]
						}
					}))
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		}
		rep := runOn(t, w, nil, agent, OnlyScenario(ScenarioInterleaving), Outcome(w.snapshot))
		if len(rep.Results) == 0 {
			t.Fatalf("%s: no schedule ran", tc.name)
		}
		for _, code := range []string{CodeConcurrentWritesEntity, CodeOrderVariantOutcome} {
			var found []string
			for _, f := range rep.Findings {
				if f.Code == code {
					found = append(found, f.Scenario+": "+f.Message)
				}
			}
			if tc.commutes != (len(found) == 0) {
				t.Errorf("%s: %s %v, want it %v", tc.name, code, found, !tc.commutes)
			}
		}
	}
}
