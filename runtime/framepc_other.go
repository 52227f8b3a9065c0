//go:build !amd64

package runtime

// framePCs is not available here: callSite always unwinds.
func framePCs() (ret, site uintptr) { return 0, 0 }
