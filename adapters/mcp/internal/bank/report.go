package bank

import "github.com/agentidem/agentidem-go/runtime"

// Has reports whether rep has a finding with code in scenario.
func Has(rep *runtime.Report, scenario, code string) bool {
	for _, f := range rep.Findings {
		if f.Scenario == scenario && f.Code == code {
			return true
		}
	}
	return false
}

// Result returns the result of scenario, or nil.
func Result(rep *runtime.Report, scenario string) *runtime.Result {
	for _, r := range rep.Results {
		if r.Scenario == scenario {
			return r
		}
	}
	return nil
}

// Codes lists "scenario:code" for every finding, for failure messages.
func Codes(rep *runtime.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Scenario+":"+f.Code)
	}
	return out
}
