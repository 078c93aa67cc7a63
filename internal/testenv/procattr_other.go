//go:build !linux

package testenv

import "syscall"

func KillWithParent() *syscall.SysProcAttr { return nil }
