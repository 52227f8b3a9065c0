package agentidemeino_test

import (
	"context"
	"slices"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/cloudwego/eino/compose"
)

// send_sms takes its identity from message_id, an optional field the
// model left out of both calls, which send two different texts. Their
// identity is unknown, not null: they are not one write done twice, and
// the suite says that their duplicates cannot be judged.
func TestMissingIdentityArgumentIsNotADuplicate(t *testing.T) {
	send := agentidemeino.Middleware(agentidemeino.Tools{
		"send_sms": agentidemeino.Write(agentidemeino.Identity("message_id")),
	}).Invokable(func(context.Context, *compose.ToolInput) (*compose.ToolOutput, error) {
		return &compose.ToolOutput{Result: "sent"}, nil
	})
	agent := func(ctx context.Context) error {
		for _, body := range []string{"your parcel ships today", "your parcel was delivered"} {
			if _, err := send(ctx, &compose.ToolInput{Name: "send_sms", Arguments: `{"to":"+4915112345678","body":"` + body + `"}`, CallID: body}); err != nil {
				return err
			}
		}
		return nil
	}
	rep := testkit.Run(t, agent, testkit.NoSummary())
	var baseline []string
	for _, f := range rep.Baseline.Findings {
		baseline = append(baseline, f.Code)
	}
	if !slices.Equal(baseline, []string{runtime.CodeIdentityMissing}) {
		t.Fatalf("baseline findings %v, want identity_missing alone", baseline)
	}
	for _, o := range rep.Baseline.Trace.Ops {
		if o.Identity != "" || o.IdentityError == "" {
			t.Errorf("%s: identity %q error %q, want unknown", o.ID, o.Identity, o.IdentityError)
		}
	}
}
