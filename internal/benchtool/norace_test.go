//go:build !race

package benchtool

const raceEnabled = false
