// Package envlist reads variables from an environment list ("KEY=value"
// entries, as os.Environ returns them), which gpuform's commands take
// instead of the process's environment, so that tests set their own.
package envlist

import "strings"

// Lookup returns the value of key in env, the last entry winning as in a
// process environment, or "" when it is not set.
func Lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
