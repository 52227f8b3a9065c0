//go:build amd64 || arm64

package runtime

// goidAt returns the 8 bytes at off in the calling goroutine's g
// (assembly). Only goid.go calls it, with an offset it has checked.
func goidAt(off uintptr) uint64

const haveGoidAt = true
