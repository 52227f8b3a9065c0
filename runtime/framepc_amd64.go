package runtime

// framePCs reads two return addresses off the frame pointers (assembly):
// the caller's own return address and its caller's. It is called by Begin
// only, directly.
func framePCs() (ret, site uintptr)

// framePath stores the return addresses of the caller's frame and the
// frames above it, off the frame pointers (assembly), and returns how many.
// Call.path reads them only where the process made no cgo call: a C frame
// keeps no Go frame pointer to follow.
func framePath(pcs *[pathWalk]uintptr) int
