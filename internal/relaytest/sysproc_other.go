//go:build !linux

package relaytest

import "syscall"

// childSysProcAttr: outside Linux a child outlives a crashed test binary until the
// test's cleanup kills it.
func childSysProcAttr() *syscall.SysProcAttr { return nil }
