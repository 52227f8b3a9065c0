package testkit_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

func TestZZProf(t *testing.T) {
	if os.Getenv("ZZPROF") == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("ZZN"))
	if n == 0 {
		n = 500
	}
	dir := os.Getenv("ZZDIR")
	if dir == "" {
		dir = t.TempDir()
	}
	a := measureAgents()[2]
	agent, setup := a.agent()
	switch os.Getenv("ZZPROF") {
	case "ta":
		for range n {
			t.Run("x", func(t *testing.T) { testkit.TestAgent(t, agent, testkit.With(setup), testkit.ReportDir(dir)) })
		}
	case "rt":
		for range n {
			runtime.Run(context.Background(), "measure", agent, setup)
		}
	}
}
