package sim

import "os"

// alive reports whether process pid exists: on Windows, os.FindProcess
// opens the process and fails when there is none.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
