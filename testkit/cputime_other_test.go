//go:build !unix

package testkit_test

import "time"

// processCPU is not measured here: the CPU column reads 0.
func processCPU() time.Duration { return 0 }
