package directive

import "strings"

// Nondeterministic says why a call of the package-level function name of
// the package at path returns a fresh value each time (a clock, a random
// source, a random UUID, the process), or "" when it is not known to. An
// identity or idempotency key built from such a call changes on every
// retry, which defeats the point. Name-based UUIDs (uuid.NewSHA1, NewMD5)
// and constructors of random sources (rand.New) are deterministic and not
// reported. The generator and the analyzer share this list.
func Nondeterministic(path, name string) string {
	short := pkgName(path) + "." + name
	switch path {
	case "time":
		if name == "Now" || name == "Since" || name == "Until" {
			return "time." + name
		}
	case "os":
		if name == "Getpid" || name == "Hostname" {
			return "os." + name
		}
	case "github.com/google/uuid":
		if strings.HasPrefix(name, "New") && name != "NewHash" && name != "NewMD5" && name != "NewSHA1" {
			return "uuid." + name
		}
	case "github.com/gofrs/uuid", "github.com/gofrs/uuid/v5", "github.com/satori/go.uuid":
		for _, p := range []string{"NewV1", "NewV4", "NewV6", "NewV7"} {
			if strings.HasPrefix(name, p) {
				return "uuid." + name
			}
		}
	case "math/rand", "math/rand/v2":
		if !strings.HasPrefix(name, "New") && name != "Seed" {
			return "rand." + name
		}
	case "crypto/rand":
		if name == "Text" || name == "Int" || name == "Prime" || name == "Read" {
			return "rand." + name
		}
	case "github.com/oklog/ulid", "github.com/oklog/ulid/v2":
		if name == "Make" {
			return short
		}
	case "github.com/rs/xid", "github.com/segmentio/ksuid":
		if name == "New" {
			return short
		}
	}
	return ""
}

// pkgName is the last element of an import path, skipping a major version
// suffix: github.com/oklog/ulid/v2 is ulid.
func pkgName(path string) string {
	elem := path[strings.LastIndexByte(path, '/')+1:]
	if len(elem) > 1 && elem[0] == 'v' && strings.Trim(elem[1:], "0123456789") == "" {
		if i := strings.LastIndexByte(path[:len(path)-len(elem)-1], '/'); i >= 0 {
			return path[i+1 : len(path)-len(elem)-1]
		}
	}
	return elem
}
