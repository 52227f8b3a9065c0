package testkit

import (
	"strings"

	"github.com/agentidem/agentidem-go/internal/render"
	"github.com/agentidem/agentidem-go/runtime"
)

// Summary renders a report as the readable text go test -v prints: the
// verdict, every scenario with its fault and whether it fired, then every
// finding with its op, identity, scenario and replay line. It is the text
// agentidem-gen report prints for a saved report.
func Summary(r *runtime.Report) string {
	return strings.TrimRight(render.Text(r), "\n")
}
