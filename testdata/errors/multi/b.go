package multi

//agentidem:write identity=id bogus=1
func b(id string) error { return nil }
