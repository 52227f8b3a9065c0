#include "textflag.h"

// func goidAt(off uintptr) uint64
//
// Returns the 8 bytes at off in the calling goroutine's g, the runtime's
// goroutine descriptor, which register g (R28) holds. goid.go finds the
// offset of the goroutine id there, and checks it, before using it.
TEXT ·goidAt(SB), NOSPLIT, $0-16
	MOVD off+0(FP), R0
	MOVD g, R1
	ADD R0, R1, R1
	MOVD (R1), R0
	MOVD R0, ret+8(FP)
	RET
