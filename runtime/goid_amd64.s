#include "textflag.h"

// func goidAt(off uintptr) uint64
//
// Returns the 8 bytes at off in the calling goroutine's g, the runtime's
// goroutine descriptor, whose address the TLS slot holds. goid.go finds
// the offset of the goroutine id there, and checks it, before using it.
TEXT ·goidAt(SB), NOSPLIT, $0-16
	MOVQ off+0(FP), AX
	MOVQ TLS, CX
	MOVQ 0(CX)(TLS*1), CX
	ADDQ CX, AX
	MOVQ 0(AX), AX
	MOVQ AX, ret+8(FP)
	RET
