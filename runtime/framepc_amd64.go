package runtime

// framePCs reads two return addresses off the frame pointers (assembly):
// the caller's own return address and its caller's. It is called by Begin
// and BeginArgs only, directly.
func framePCs() (ret, site uintptr)

// fpCallers reads the return addresses of the frames above its caller off
// the frame pointers (assembly): the caller's own return address first.
// It stores as many as pcs holds, or fewer where the chain ends, and
// returns how many. It is called by Call.path only, directly. It keeps
// nothing of pcs: without go:noescape, path's array of them went to the
// heap, an allocation for each path recorded.
//
//go:noescape
func fpCallers(pcs []uintptr) int
