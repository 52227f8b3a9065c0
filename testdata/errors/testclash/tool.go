package testclash

// Svc is a service.
type Svc struct{}

//agentidem:write identity=id
func save(id string) error { return nil }

//agentidem:write identity=id
func (s *Svc) Send(id string) error { return nil }
