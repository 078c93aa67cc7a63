package testenv

import "syscall"

// killWithParent makes a server a test started die with the test process,
// even when that is killed before its cleanups run.
func killWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
