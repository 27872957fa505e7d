//go:build linux

package main

import (
	"testing"
)

// NO_COLOR (no-color.org) set to anything turns colours off on a
// terminal, as --no-color does; empty, it does not.
func TestNoColorEnv(t *testing.T) {
	_, tty := openPTY(t) // escape_integration_test.go
	for _, tt := range []struct {
		env     []string
		noColor bool
		want    bool
	}{
		{nil, false, true},
		{[]string{"NO_COLOR=1"}, false, false},
		{[]string{"NO_COLOR=true"}, false, false},
		{[]string{"NO_COLOR="}, false, true},
		{nil, true, false},
	} {
		g := &globals{env: tt.env, noColor: tt.noColor}
		if got := g.color(tty); got != tt.want {
			t.Errorf("env %q, --no-color %v: colours %v, want %v", tt.env, tt.noColor, got, tt.want)
		}
	}
}
