package testclash

func saveTraced(id string) error { return nil }

func (s *Svc) SendTraced(id string) error { return nil }
