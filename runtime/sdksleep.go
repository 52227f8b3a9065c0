package runtime

import "strings"

// sleepBackoffs are the HTTP clients whose retry loop waits with
// time.Sleep between two attempts of one request, not in a select on a
// timer and the context (retryBackoffs): stripe-go, whose
// BackendImplementation sleeps in requestWithRetriesAndTelemetry (v76 to
// v82) or in Do (older versions) before it sends a request again after a
// 409 lock timeout, a 429, a 5xx or a dropped connection. A goroutine
// asleep in time.Sleep is busy anyway; known, the sleep is also a retry's
// back-off, whose retry the report notes (retried.go): stripe-go's retries
// were never noted (red team rtT #2). Each entry is a package path prefix
// and the receiver and method the sleep's caller is in.
var sleepBackoffs = []struct{ pkg, method string }{
	{"github.com/stripe/stripe-go", ".(*BackendImplementation).requestWithRetriesAndTelemetry"},
	{"github.com/stripe/stripe-go", ".(*BackendImplementation).Do"},
}

// sleepBackoff says, of a goroutine asleep (state "sleep") with frames
// funcs, which client's retry back-off the sleep is (sleepBackoffs): the
// client's package and method, "" if none.
func sleepBackoff(state string, funcs []string) string {
	if state != "sleep" || len(funcs) < 2 || !strings.HasPrefix(funcs[0], "time.Sleep") {
		return ""
	}
	f := funcs[1]
	for _, b := range sleepBackoffs {
		if !strings.HasPrefix(f, b.pkg) {
			continue
		}
		if i := strings.Index(f, b.method); i > 0 && (len(f) == i+len(b.method) || f[i+len(b.method)] == '(') {
			// From the package's name, with the module's before a
			// major version: stripe-go/v82.(*BackendImplementation)...
			from := strings.LastIndexByte(f[:i], '/')
			if seg := f[from+1 : i]; from > 0 && len(seg) > 1 && seg[0] == 'v' && seg[1] >= '0' && seg[1] <= '9' {
				from = strings.LastIndexByte(f[:from], '/')
			}
			return f[from+1 : i+len(b.method)]
		}
	}
	return ""
}
