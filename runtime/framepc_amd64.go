package runtime

// framePCs reads two return addresses off the frame pointers (assembly):
// the caller's own return address and its caller's. It is called by Begin
// only, directly.
func framePCs() (ret, site uintptr)
