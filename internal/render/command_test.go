package render

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/examples/invoices"
	"github.com/agentidem/agentidem-go/runtime"
)

func TestShellCommand(t *testing.T) {
	for in, want := range map[string]string{
		"go test -run '^TestX$/^interleaving$/^s0s1f0f1$' example.com/m (or: AGENTIDEM_SCHEDULE='s0s1f0f1')": "AGENTIDEM_SCHEDULE='s0s1f0f1' go test -run '^TestX$/^interleaving$/^s0s1f0f1$' example.com/m",
		"go test -run '^TestX$/^lost_acknowledgement$/^refund#1$' ./x":                                       "go test -run '^TestX$/^lost_acknowledgement$/^refund#1$' ./x",
		"": "",
	} {
		if got := shellCommand(in); got != want {
			t.Errorf("shellCommand(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// Every copy button of a real report with schedule findings copies a line
// that bash parses, and a schedule's names AGENTIDEM_SCHEDULE first.
func TestCopyButtonsCopyCommandsBashRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var b *invoices.Billing
	rep, err := runtime.Run(context.Background(), "TestDependencyAgent", func(ctx context.Context) error {
		return (&invoices.DependencyAgent{Billing: b}).Run(ctx)
	}, runtime.Setup(func(context.Context) error { b = invoices.NewBilling(); return nil }),
		runtime.ReplayCommand(func(s string) string {
			return "go test -run '^TestDependencyAgent$/^" + strings.ReplaceAll(s, "/", "$/^") + "$' ./examples/invoices"
		}))
	if err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, renderHTML(t, rep))
	schedules := 0
	for _, btn := range find(doc, "button", "copy") {
		cmd, _ := attr(btn, "data-copy")
		if out, err := exec.Command(bash, "-n", "-c", cmd).CombinedOutput(); err != nil {
			t.Errorf("bash cannot parse the copied line %q: %s", cmd, out)
		}
		if strings.Contains(cmd, "AGENTIDEM_SCHEDULE=") {
			schedules++
			if !strings.HasPrefix(cmd, "AGENTIDEM_SCHEDULE='") {
				t.Errorf("copied %q: the schedule must come first, as an environment assignment", cmd)
			}
		}
	}
	if schedules == 0 {
		t.Error("no copy button carries a schedule: the fixture lost its ordering finding")
	}
}
