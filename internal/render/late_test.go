package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// A goroutine the baseline left running calls a traced tool after the
// baseline's run ended: the report makes the baseline inconclusive, and
// the verdict says so, though inconclusive_count counts fault scenarios
// only (the AgentIdem report's meaning). Before, the verdict was SAFE
// while the baseline's row said inconclusive.
func TestLateCallOfTheBaselineMakesTheVerdictInconclusive(t *testing.T) {
	op := &runtime.Op{Kind: runtime.KindWrite, Name: "put", Params: []string{"k"}, Pos: "x.go:1"}
	put := func(ctx context.Context, k string) {
		args := []any{k}
		c, _ := runtime.Begin(ctx, op, args, args, nil)
		c.Start()
		c.Finish(nil)
	}
	wake, made := make(chan struct{}), make(chan struct{})
	agent := func(ctx context.Context) error {
		go func() { <-wake; put(ctx, "late"); close(made) }()
		put(ctx, "a")
		return nil
	}
	s := runtime.NewSuite("late-baseline", agent, runtime.OnlyScenario(runtime.ScenarioBaseline))
	base, err := s.Baseline(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	close(wake)
	<-made
	rep := s.Report()
	if !base.Inconclusive {
		t.Fatal("baseline not marked inconclusive")
	}
	if v := Verdict(rep); v != VerdictInconclusive {
		t.Errorf("verdict %s, want %s", v, VerdictInconclusive)
	}
	var page bytes.Buffer
	if err := HTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "no unsafe scenario, but the baseline inconclusive") {
		t.Error("the page's headline does not say the baseline is inconclusive")
	}
	// The text header and the HTML baseline tile say it too: before, they
	// said "baseline ok" beside "0 inconclusive".
	header, _, _ := strings.Cut(Text(rep), "\n")
	if !strings.Contains(header, "baseline inconclusive") {
		t.Errorf("header %q does not say the baseline is inconclusive", header)
	}
	checkBaselineTile(t, page.Bytes(), "inconclusive", "warn")
}
