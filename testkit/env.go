package testkit

import (
	"errors"
	"os"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

// readEnv reads testkit's own AGENTIDEM_* switches into st:
// AGENTIDEM_FAIL_INCONCLUSIVE (FailInconclusive) and AGENTIDEM_UPDATE
// (read by Golden, as the test package's own -update flag is). AGENTIDEM_REPORT_DIR takes any directory. A
// value that is no switch is a *runtime.ConfigError naming the variable,
// the value and the values it takes, as runtime's variables are: both
// used to be ignored, and a CI gate set with AGENTIDEM_FAIL_INCONCLUSIVE=true
// gated nothing.
func readEnv(st *settings) error {
	fail, err1 := envSwitch("AGENTIDEM_FAIL_INCONCLUSIVE", "fail the test on an inconclusive scenario")
	st.failInconclusive = st.failInconclusive || fail
	_, err2 := envSwitch("AGENTIDEM_UPDATE", "rewrite golden files")
	return errors.Join(err1, err2)
}

// envSwitch reads the variable name as a switch that does what does says:
// 1, true or yes (in any case) turn it on; 0, false, no or no value leave
// it off; anything else is a *runtime.ConfigError.
func envSwitch(name, does string) (bool, error) {
	v := os.Getenv(name)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes":
		return true, nil
	case "", "0", "false", "no":
		return false, nil
	}
	return false, &runtime.ConfigError{Setting: name, Value: v, Want: "want 1 (or true, yes) to " + does + ", or 0 (or false, no) or no value not to"}
}
