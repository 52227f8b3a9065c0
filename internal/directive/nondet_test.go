package directive

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNondeterministic(t *testing.T) {
	fresh := map[[2]string]string{
		{"time", "Now"}:                         "time.Now",
		{"time", "Since"}:                       "time.Since",
		{"github.com/google/uuid", "NewString"}: "uuid.NewString",
		{"github.com/google/uuid", "New"}:       "uuid.New",
		{"github.com/gofrs/uuid/v5", "NewV4"}:   "uuid.NewV4",
		{"math/rand/v2", "IntN"}:                "rand.IntN",
		{"math/rand", "Int63"}:                  "rand.Int63",
		{"crypto/rand", "Text"}:                 "rand.Text",
		{"github.com/oklog/ulid/v2", "Make"}:    "ulid.Make",
		{"github.com/rs/xid", "New"}:            "xid.New",
		{"os", "Getpid"}:                        "os.Getpid",
	}
	for in, want := range fresh {
		assert.Equal(t, want, Nondeterministic(in[0], in[1]), "%v", in)
	}
	for _, in := range [][2]string{
		{"github.com/google/uuid", "NewSHA1"}, // name-based: the same name gives the same UUID
		{"github.com/google/uuid", "NewMD5"},
		{"math/rand/v2", "New"}, // a source, seeded by the caller
		{"time", "Date"},
		{"time", "Unix"},
		{"fmt", "Sprint"},
		{"os", "Getenv"},
	} {
		assert.Empty(t, Nondeterministic(in[0], in[1]), "%v", in)
	}
}
