#include "textflag.h"

// func framePCs() (ret, site uintptr)
//
// Called by Begin: BP is Begin's frame pointer. ret is Begin's return
// address (in the wrapper), site the wrapper's return address (in the
// agent's code). See callSite.
TEXT ·framePCs(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ BP, AX
	MOVQ 8(AX), BX
	MOVQ BX, ret+0(FP)
	MOVQ 0(AX), AX
	MOVQ 8(AX), BX
	MOVQ BX, site+8(FP)
	RET

// func framePath(pcs *[pathWalk]uintptr) int
//
// Walks the frame pointers from the caller's frame up, storing each frame's
// return address, until pcs is full or a frame pointer or return address is
// zero (the first frame of a goroutine saved a zero frame pointer). The
// runtime's execution tracer unwinds the same way.
TEXT ·framePath(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ pcs+0(FP), DI
	MOVQ BP, AX
	XORQ CX, CX
loop:
	CMPQ CX, $9
	JGE done
	TESTQ AX, AX
	JZ done
	MOVQ 8(AX), BX
	TESTQ BX, BX
	JZ done
	MOVQ BX, (DI)(CX*8)
	INCQ CX
	MOVQ 0(AX), AX
	JMP loop
done:
	MOVQ CX, ret+8(FP)
	RET
