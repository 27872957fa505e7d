package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFleetDrift(t *testing.T) {
	f := newTestFleet(t, "west", "east", "burst")
	if r := f.run(t, nil, "apply", "--auto-approve", "--cluster", "west", "--cluster", "burst"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	f.unreachable(t, "east")
	f.edit(t, "burst", `value = 1000`, `value = 2000`)
	tests := []struct {
		name string
		args []string
		code int
		want []string
		// metrics are lines the metrics file must hold.
		metrics []string
	}{
		{"in sync", []string{"--cluster", "west"}, 0, []string{`Cluster "west":`, "Fleet drift:", "  west  in sync"},
			[]string{`gpuform_drift_in_sync{stack="quickstart",cluster="west"} 1`, `gpuform_drift_check_succeeded{cluster="west"} 1`}},
		{"drifted", []string{"--cluster", "west", "--cluster", "burst"}, 2, []string{`Cluster "west":`, `Cluster "burst":`, "  west   in sync", "  burst  drifted: "},
			[]string{`gpuform_drift_in_sync{stack="quickstart",cluster="burst"} 0`, `gpuform_drift_objects{stack="quickstart",cluster="west",class="live-edit"} 0`}},
		{"unreachable member", nil, 1, []string{`Cluster "west":`, `Cluster "east":`, "Not checked: unreachable: ", `Cluster "burst":`, "  east   unreachable: ", "  burst  drifted: "},
			[]string{`gpuform_drift_check_succeeded{cluster="east"} 0`, `gpuform_drift_check_succeeded{cluster="burst"} 1`, `gpuform_drift_in_sync{stack="quickstart",cluster="west"} 1`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.run(t, nil, append([]string{"drift", "--metrics-file", "drift.prom"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			inOrder(t, r.stdout, tc.want...)
			b, err := os.ReadFile(filepath.Join(f.root, "drift.prom"))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.metrics {
				if !strings.Contains(string(b), m+"\n") {
					t.Errorf("metrics file has no %q:\n%s", m, b)
				}
			}
			if strings.Contains(string(b), `cluster="east",`) {
				t.Errorf("an unchecked member has drift samples:\n%s", b)
			}
		})
	}
	// --fix fixes each drifted member under its own lock; the unreachable
	// one still sets exit 1, and the fixed one is in sync afterwards.
	r := f.run(t, nil, "drift", "--fix", "--metrics-file", "drift.prom")
	if r.code != 1 {
		t.Fatalf("drift --fix: exit %d, want 1 (east unreachable)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	inOrder(t, r.stdout, `Cluster "west":`, `Cluster "burst":`, "Fixing the drift: applying the configuration", "After the fix:", "  west   in sync", "  east   unreachable: ", "  burst  fixed")
	if b, err := os.ReadFile(filepath.Join(f.root, "drift.prom")); err != nil || !strings.Contains(string(b), `gpuform_drift_in_sync{stack="quickstart",cluster="burst"} 1`+"\n") {
		t.Errorf("metrics after the fix: %v\n%s", err, b)
	}
	if r := f.run(t, nil, "drift", "--cluster", "burst"); r.code != 0 {
		t.Errorf("drift after the fix: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
