package idem

// Key joins the parts of an idempotency key.
func Key(parts ...string) string {
	k := ""
	for _, p := range parts {
		k += p + "/"
	}
	return k
}
