#include "textflag.h"

// func framePCs() (ret, site uintptr)
//
// Called by Begin or BeginArgs: BP is its frame pointer. ret is its return
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

// func fpCallers(pcs []uintptr) int
//
// Called by Call.path: BP is path's frame pointer. It stores the return
// addresses read off the chain of frame pointers (path's own first, then
// its caller's, ...), as many as pcs holds or until the chain ends (a
// goroutine's first frame saved a zero frame pointer), and returns how
// many it stored.
TEXT ·fpCallers(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ BP, AX
	MOVQ pcs_base+0(FP), DI
	MOVQ pcs_len+8(FP), CX
	XORQ DX, DX
loop:
	CMPQ DX, CX
	JGE  done
	TESTQ AX, AX
	JZ   done
	MOVQ 8(AX), BX
	MOVQ BX, (DI)(DX*8)
	MOVQ 0(AX), AX
	INCQ DX
	JMP  loop
done:
	MOVQ DX, ret+24(FP)
	RET
