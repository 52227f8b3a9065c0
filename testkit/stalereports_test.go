package testkit_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realworld"
)

// TestStaleReportsChild is the ticket agent, unkeyed (UNSAFE) or against
// the desk that opens one ticket per order with State (SAFE). Run by
// TestNumberedReportsOfAnEarlierRunAreRemoved.
func TestStaleReportsChild(t *testing.T) {
	dir := os.Getenv("AGENTIDEM_STALE_DIR")
	if dir == "" {
		t.Skip("run by TestNumberedReportsOfAnEarlierRunAreRemoved")
	}
	keyed := os.Getenv("AGENTIDEM_STALE_KEYED") == "1"
	var desk *orderDesk
	var srv *httptest.Server
	t.Cleanup(func() { srv.Close() })
	testkit.TestAgent(t, func(ctx context.Context) error {
		return realworld.RequestTicketTraced(ctx, srv.URL, "o-42")
	}, testkit.Setup(func(context.Context) error {
		if srv != nil {
			srv.Close()
		}
		desk = &orderDesk{tickets: map[string]int{}, keyed: keyed}
		srv = httptest.NewServer(desk)
		return nil
	}), testkit.State(func() any { return desk.count("o-42") }), testkit.ReportDir(dir))
}

// go test -count=3 writes TestX.json, TestX_02.json and TestX_03.json; a
// later go test -count=1 rewrote TestX.json alone, and the earlier run's
// numbered reports stayed beside it: agentidem-gen report dir/ listed the
// fixed agent as UNSAFE twice (red team rtV #19). The first report a
// process writes for a test now removes the numbered ones an earlier run
// left of that test, and keeps those of another test (TestX_02 may be a
// test of its own).
func TestNumberedReportsOfAnEarlierRunAreRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	reports := filepath.Join(dir, "testkit")
	run := func(count, keyed string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStaleReportsChild$", "-test.count="+count)
		cmd.Env = append(os.Environ(), "AGENTIDEM_STALE_DIR="+dir, "AGENTIDEM_STALE_KEYED="+keyed)
		out, _ := cmd.CombinedOutput()
		t.Logf("count %s keyed %s:\n%s", count, keyed, out)
	}
	names := func() []string {
		entries, err := os.ReadDir(reports)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		slices.Sort(out)
		return out
	}
	run("3", "0")
	require.Equal(t, []string{"TestStaleReportsChild.json", "TestStaleReportsChild_02.json", "TestStaleReportsChild_03.json"}, names())
	// Another test's report whose name reads as a numbered one.
	other := filepath.Join(reports, "TestStaleReportsChild_07.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"name": "TestStaleReportsChild_07", "safe": true}`), 0o644))

	run("1", "1")
	assert.Equal(t, []string{"TestStaleReportsChild.json", "TestStaleReportsChild_07.json"}, names(), "the earlier run's numbered reports are gone, another test's stays")
	raw, err := os.ReadFile(filepath.Join(reports, "TestStaleReportsChild.json"))
	require.NoError(t, err)
	var rep struct {
		Safe              bool `json:"safe"`
		InconclusiveCount int  `json:"inconclusive_count"`
	}
	require.NoError(t, json.Unmarshal(raw, &rep))
	assert.True(t, rep.Safe && rep.InconclusiveCount == 0, "the fixed agent's report")

	run("2", "1")
	assert.Equal(t, []string{"TestStaleReportsChild.json", "TestStaleReportsChild_02.json", "TestStaleReportsChild_07.json"}, names(), "a process keeps the numbered reports it wrote")
}
