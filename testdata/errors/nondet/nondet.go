// Package nondet has identities that change on every call.
package nondet

import (
	crand "crypto/rand"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"time"

	"github.com/google/uuid"
)

//agentidem:write identity=time.Now()
func now(id string) error { return nil }

//agentidem:write identity=id,fmt.Sprint(time.Now().Unix())
func nested(id string) error { return nil }

//agentidem:write identity=rand.Int()
func mathRand(id string) error { return nil }

//agentidem:write identity=randv2.IntN(10)
func mathRandV2(id string) error { return nil }

//agentidem:write identity=crand.Text()
func cryptoRand(id string) error { return nil }

//agentidem:write identity=uuid.NewString()
func uuidString(id string) error { return nil }

//agentidem:write identity=uuid.New().String()
func uuidNew(id string) error { return nil }

// The imports are used by the directives; these keep the package building.
var (
	_ = fmt.Sprint
	_ = crand.Reader
	_ = rand.Int
	_ = randv2.IntN
	_ = uuid.New
	_ = time.Now
)
