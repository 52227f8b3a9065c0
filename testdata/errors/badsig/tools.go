package badsig

//agentidem:write identity=id
func good(id string) error { return nil }

//agentidem:write identity=id
func broken(id string, m Missing) error { return nil }
