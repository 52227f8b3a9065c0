package runtime

import (
	goruntime "runtime"
	"testing"
)

func TestFuncPackage(t *testing.T) {
	for fn, want := range map[string]string{
		"example.com/a/b.(*T).M":                   "example.com/a/b",
		"example.com/a/b.F.func1":                  "example.com/a/b",
		"gopkg.in/yaml%2ev3.Unmarshal":             "gopkg.in/yaml.v3",
		"github.com/x/y.v2/pkg.F[...]":             "github.com/x/y.v2/pkg",
		"main.main":                                "main",
		"net/http.(*Client).Do":                    "net/http",
		"github.com/agentidem/agentidem-go/x_test": "github.com/agentidem/agentidem-go/x_test",
	} {
		if got := funcPackage(fn); got != want {
			t.Errorf("funcPackage(%q) = %q, want %q", fn, got, want)
		}
	}
}

func TestUserFrame(t *testing.T) {
	const main = "github.com/agentidem/agentidem-go/adapters/eino"
	for _, c := range []struct {
		fn, file string
		want     bool
	}{
		{main + ".Middleware.func1", "/src/adapters/eino/middleware.go", false},                       // the adapter
		{main + "_test.TestX.func1", "/src/adapters/eino/detached_test.go", true},                     // its tests
		{main + "/examples/billing.Run", "/src/adapters/eino/examples/billing/agent.go", true},        // its examples
		{"github.com/agentidem/agentidem-go/runtime.Begin", "/src/runtime/call.go", false},            // the runtime
		{"github.com/cloudwego/eino/compose.(*ToolsNode).Invoke", "/mod/compose/tool_node.go", false}, // a framework
		{"net/http.(*Client).Do", "/go/src/net/http/client.go", false},
	} {
		if got := userFrame(goruntime.Frame{Function: c.fn, File: c.file}, main); got != c.want {
			t.Errorf("userFrame(%s) = %v, want %v", c.fn, got, c.want)
		}
	}
}
