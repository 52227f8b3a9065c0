package runtime

// StateGuard has the judge call State through g: g calls call, which runs
// State, once, and returns nil; or it returns an error without calling it,
// which the judge takes as State's failure (as a panic in State). The
// suite names State by the function given to State, not by g's closure.
//
// testkit uses it to notice a State that ends its goroutine (t.Fatal on a
// t it captured, which runtime.Goexit nothing can stop) and to stop the
// suite there with a clear error; most users need it not.
func StateGuard(g func(call func()) error) Option {
	return optionFunc(func(c *config) { c.guard = g })
}

// guardedState returns State as the judge calls it: through StateGuard's
// function, if one was given.
func (c *config) guardedState() func() any {
	state, g := c.state, c.guard
	if g == nil || state == nil {
		return state
	}
	return func() (v any) {
		if err := g(func() { v = state() }); err != nil {
			panic(err)
		}
		return v
	}
}
