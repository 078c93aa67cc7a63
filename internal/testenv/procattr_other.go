//go:build !linux

package testenv

import "syscall"

func killWithParent() *syscall.SysProcAttr { return nil }
