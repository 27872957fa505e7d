//go:build !windows

package sim

import "syscall"

// alive reports whether process pid exists (signal 0 reaches it).
func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
