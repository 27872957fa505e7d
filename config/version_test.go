package config

import "testing"

func TestSatisfiesVersion(t *testing.T) {
	for _, tt := range []struct {
		constraint, have string
		want             bool
	}{
		{">= 535", "550.54.15", true},
		{">= 560", "550.54.15", false},
		{"> 550", "550.54.15", false}, // only the given components compare
		{"> 550.54", "550.54.15", false},
		{"> 550.54.14", "550.54.15", true},
		{"< 550.54.16", "550.54.15", true},
		{"<= 550.54", "550.54.15", true},
		{"550", "550.54.15", true},
		{"= 550.54.15", "550.54", false}, // a missing component is 0
		{"550.54.0", "550.54", true},
		{"< 550.54.1", "550.54", true},
	} {
		got, err := SatisfiesVersion(tt.constraint, tt.have)
		if err != nil || got != tt.want {
			t.Errorf("SatisfiesVersion(%q, %q) = %v, %v; want %v", tt.constraint, tt.have, got, err, tt.want)
		}
	}
	if _, err := SatisfiesVersion(">= 5x", "550"); err == nil {
		t.Error("a constraint that is not a version is accepted")
	}
}
