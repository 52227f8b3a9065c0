package runtime

import "testing"

func TestMissingKeyIsAnEmptyTable(t *testing.T) {
	r, s := `["t1","open",0]`, `["t2","open",0]`
	one := describeChange(`{}`, `{"T":[`+r+`]}`, -1)
	cl := describeChange(`{"T":[`+s+`]}`, `{"T":[`+s+`,`+r+`]}`, -1)
	if one != cl {
		t.Errorf("one execution %q, cluster %q", one, cl)
	}
}

// But a key added with a scalar is still a key added, whole.
func TestMissingScalarKeyStaysAdded(t *testing.T) {
	if a, b := describeChange(`{}`, `{"n":1}`, -1), describeChange(`{}`, `{"n":2}`, -1); a == b {
		t.Errorf("adding n=1 and n=2 compare equal: %q", a)
	}
	if a, b := describeChange(`{}`, `{"m":{"a":1}}`, -1), describeChange(`{"m":{"b":2}}`, `{"m":{"a":1,"b":2}}`, -1); a != b {
		t.Errorf("adding key a to an absent map and beside b: %q, %q", a, b)
	}
}
