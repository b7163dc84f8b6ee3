//go:build unix && !linux

package chaostest

import "syscall"

// workerSysProcAttr: without Pdeathsig, the tests' cleanups kill worker processes.
func workerSysProcAttr() *syscall.SysProcAttr { return nil }
