package kubeapitest

import (
	"slices"
	"testing"
)

func TestOptionsArgs(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{"none", Options{}, []string{"--dir", "D"}},
		{"workloads", Options{Workloads: true}, []string{"--dir", "D", "--workloads"}},
		{"API server flags after --", Options{Workloads: true, APIServerArgs: []string{"--profiling=true"}},
			[]string{"--dir", "D", "--workloads", "--", "--profiling=true"}},
	}
	for _, tt := range tests {
		if got := tt.o.args("D"); !slices.Equal(got, tt.want) {
			t.Errorf("%s: args %q, want %q", tt.name, got, tt.want)
		}
	}
}
