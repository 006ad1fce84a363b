//go:build !unix

package main

const (
	accessDir   = 0
	accessRead  = 0
	accessWrite = 0
)

// access is unknown off Unix: the open itself reports what is wrong.
func access(string, uint32) error { return nil }
