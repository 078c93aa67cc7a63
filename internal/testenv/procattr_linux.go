package testenv

import "syscall"

// KillWithParent makes a server a test started die with the test process,
// even when that is killed before its cleanups run (a test binary's
// timeout panics without running them).
func KillWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
