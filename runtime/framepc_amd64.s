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
