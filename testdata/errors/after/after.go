package after

//agentidem:write identity=id
func create(id string) error { return nil }

//agentidem:write identity=id after=create,ghost
func attach(id string) error { return nil }
