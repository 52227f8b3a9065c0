package testkit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A test binary without an -update flag (testkit defines none) is told to
// record with AGENTIDEM_UPDATE=1, which works in every package; -update is
// named only where the package defined it.
func TestUpdateCommandNamesTheFlagOnlyWhereItExists(t *testing.T) {
	assert.Equal(t, "AGENTIDEM_UPDATE=1 go test ./desk -run '^TestX$/^a$'", updateCommand("./desk", "TestX/a", false))
	assert.Equal(t, "go test ./desk -run '^TestX$/^a$' -update", updateCommand("./desk", "TestX/a", true))
	assert.Equal(t, "AGENTIDEM_UPDATE=1 go test . -run '^TestX$'", updateCommand("", "TestX", false))
}
