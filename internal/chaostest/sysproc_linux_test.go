//go:build linux

package chaostest

import "syscall"

// workerSysProcAttr makes a worker process die with the test binary (strictly, with
// the thread that started it, which Go keeps alive), so that a crashed or timed-out
// test leaves no worker behind.
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
