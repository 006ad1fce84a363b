//go:build unix

package main

import "golang.org/x/sys/unix"

// Modes of access.
const (
	accessDir   = unix.R_OK | unix.X_OK // list and enter a directory
	accessRead  = unix.R_OK
	accessWrite = unix.W_OK
)

// access is access(2): can this process (its real uid, which is the
// effective one here) use path so.
func access(path string, mode uint32) error { return unix.Access(path, mode) }
