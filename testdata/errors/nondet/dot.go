package nondet

import . "time"

var _ = Since

//agentidem:write identity=id,Now().Unix()
func dotNow(id string) error { return nil }
