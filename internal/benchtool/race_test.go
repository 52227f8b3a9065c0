//go:build race

package benchtool

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back, on purpose, so a call that takes a pooled buffer (encoding/json's)
// allocates it anew now and then, and allocation counts are not pinned.
const raceEnabled = true
