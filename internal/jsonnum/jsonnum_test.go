package jsonnum

import "testing"

func TestIntegerDigits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"12345678901234567891", "12345678901234567891", true},
		{"1.2345678901234567891e19", "12345678901234567891", true},
		{"1.2345678901234567891E+19", "12345678901234567891", true},
		{"-42", "-42", true},
		{"4.5", "", false},
		{"1e-3", "", false},
		{"1e401", "", false}, // too large to compute
		{"abc", "", false},
	} {
		got, ok := IntegerDigits(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("IntegerDigits(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
