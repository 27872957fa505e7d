package envlist

import "testing"

func TestLookup(t *testing.T) {
	env := []string{"NODE_NAME=a", "NODE=b", "NODE_NAME=c", "EMPTY="}
	for key, want := range map[string]string{"NODE_NAME": "c", "NODE": "b", "EMPTY": "", "MISSING": "", "NODE_": ""} {
		if got := Lookup(env, key); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", key, got, want)
		}
	}
}
