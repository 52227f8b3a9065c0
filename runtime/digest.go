package runtime

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// digestKey is this process's key for the digests of identities built
// from redacted parameters: random, made once, never written anywhere.
var digestKey = sync.OnceValue(func() []byte {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("runtime: no randomness for the identity digest key: " + err.Error())
	}
	return key
})

// keyedDigest is the digest of a canonical identity built from redacted
// parameters: "hmac-sha256:<hex>", HMAC-SHA256 under a per-process random
// key. Equal identities get equal digests within the process (one test
// binary, one run), so duplicates are still found; outside it the digest is
// useless, so nobody can recover a low-entropy value (a PIN, a card number)
// from a report by hashing candidates, as an unkeyed SHA-256 allowed.
func keyedDigest(s string) string {
	h := hmac.New(sha256.New, digestKey())
	h.Write([]byte(s))
	return "hmac-sha256:" + hex.EncodeToString(h.Sum(nil))
}
