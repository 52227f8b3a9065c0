//go:build !amd64

package runtime

// framePCs is not available here: callSite always unwinds.
func framePCs() (ret, site uintptr) { return 0, 0 }

// fpCallers is not available here: Call.path always unwinds.
func fpCallers(pcs []uintptr) int { return 0 }
