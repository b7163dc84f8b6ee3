//go:build linux

package relaytest

import "syscall"

// childSysProcAttr makes a relay child die with the test binary, so that a crashed or
// timed-out test leaves no relay behind.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
