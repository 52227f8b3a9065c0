//go:build !amd64 && !arm64

package runtime

func goidAt(uintptr) uint64 { return 0 }

const haveGoidAt = false
