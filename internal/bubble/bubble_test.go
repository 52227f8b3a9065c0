package bubble

import (
	"testing"
	"testing/synctest"
)

func TestIn(t *testing.T) {
	if In() {
		t.Error("outside a bubble: In() is true")
	}
	synctest.Test(t, func(t *testing.T) {
		if !In() {
			t.Error("inside a bubble: In() is false")
		}
		done := make(chan bool)
		go func() { done <- In() }()
		if !<-done {
			t.Error("in a goroutine of the bubble: In() is false")
		}
	})
}
