package runtime

import (
	"strings"
	"testing"
)

// failedTogetherOp is a charge of order o1 with card, of invocation inv,
// that failed by itself while another write was in flight: its cluster
// went from before to after, and it has no window of its own.
func failedTogetherOp(id string, inv int, card, before, after string) Operation {
	ev := effectView{order: inv, inCluster: true, clusterKeys: 2, before: before, after: after}
	return Operation{ID: id, Name: "charge", Kind: KindWrite, Status: StatusFailed, Identity: `"o1"`, Invocation: inv,
		Error: "gateway timeout confirming charge o1", Overlapped: true, more: judgedMore(&ev),
		Args: Args{Names: []string{"order", "card"}, Values: []any{"o1", card}}}
}

// baseWindow is the baseline's windows of one charge of o1 with card,
// from before to after.
func baseWindow(card, before, after string) map[string][2]string {
	o := failedTogetherOp("", 1, card, "", "")
	return map[string][2]string{o.Name + "\x00" + o.Identity + "\x00" + argsKey(&o): {before, after}}
}

// Two deliveries at once each charged o1 in a call that failed (the
// gateway timed out confirming it), and the two calls overlapped: neither
// has a window of its own, so the end decides. Before, neither counted as
// an execution and the concurrent delivery said nothing of the charge made
// twice (red team rtL R0; 3 to 8 runs in 20 under -race, CI167, CI171).
func TestOverlappedFailedChargesAreJudgedByTheEnd(t *testing.T) {
	const none, one, two = `{}`, `{"charges":["o1"]}`, `{"charges":["o1","o1"]}`
	for _, tc := range []struct {
		name          string
		base          map[string][2]string // the baseline's windows
		end, baseEnd  string
		before, after string // the cluster's
		want          int    // duplicate_write findings
	}{
		// Each landed: the run ended with the charge twice, where one
		// delivery's failed charge changed the state in the baseline.
		{"both landed", baseWindow("visa", none, one), two, one, none, two, 1},
		// The gateway books an order once: the end is one delivery's.
		{"keyed", baseWindow("visa", none, one), one, one, none, one, 0},
		// A declined card changes nothing in the baseline: whatever the
		// end holds (another write's doing), the declined calls did not
		// land it.
		{"declined", baseWindow("visa", none, none), two, one, none, two, 0},
		// No call with these arguments ran alone in the baseline: no
		// sign that such a call lands anything.
		{"not seen in the baseline", baseWindow("amex", none, one), two, one, none, two, 0},
		// The run ended otherwise than the baseline, but not where the
		// charge changes the state (another op's row).
		{"other part", baseWindow("visa", none, one), `{"charges":["o1"],"mails":["m","m"]}`, `{"charges":["o1"],"mails":["m"]}`, none, `{"charges":["o1"],"mails":["m","m"]}`, 0},
	} {
		tr := &Trace{Ops: []Operation{
			failedTogetherOp("1:charge#1", 1, "visa", tc.before, tc.after),
			failedTogetherOp("2:charge#1", 2, "visa", tc.before, tc.after),
		}}
		fs := judgeRepeats(tr, tc.end, tc.baseEnd, tc.base, false, false)
		if got := countCode(fs, CodeDuplicateWrite); got != tc.want {
			t.Errorf("%s: %d duplicate_write, want %d: %v", tc.name, got, tc.want, fs)
		}
		if tc.want > 0 && len(fs) > 0 && !containsAll(fs[0].Message, "1:charge#1 failed with", "2:charge#1 did it again, failing too") {
			t.Errorf("%s: the message does not say that both failed and landed: %s", tc.name, fs[0].Message)
		}
		// In the baseline itself there is no other delivery's end to
		// compare with: never a finding.
		if fs := judgeRepeats(tr, tc.end, tc.end, tc.base, true, false); len(fs) != 0 {
			t.Errorf("%s, as the baseline: findings %v, want none", tc.name, fs)
		}
	}
}

// One delivery's charge succeeded; the other's, at the same moment, was
// refused by the sink's unique key (an error) and changed nothing: the end
// is one delivery's, and the refused call is no execution.
func TestOverlappedConflictOfAKeyedChargeIsNoDuplicate(t *testing.T) {
	const none, one = `{}`, `{"charges":["o1"]}`
	ok := failedTogetherOp("1:charge#1", 1, "visa", none, one)
	ok.Status, ok.Error = StatusSuccess, ""
	refused := failedTogetherOp("2:charge#1", 2, "visa", none, one)
	refused.Error = "UNIQUE constraint failed: charges.order_id"
	fs := judgeRepeats(&Trace{Ops: []Operation{ok, refused}}, one, one, baseWindow("visa", none, one), false, false)
	if len(fs) != 0 {
		t.Errorf("findings %v, want none", fs)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
