// Package ptytest opens pseudo-terminals for tests of what a program shows
// on a person's terminal (Linux only).
package ptytest
