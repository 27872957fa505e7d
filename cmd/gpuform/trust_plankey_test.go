package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine"
)

// unitPlanKey is the plan key of these tests (64 hex digits).
var unitPlanKey = strings.Repeat("feedface", 8)

// resign rewrites the signed plan file at path with created moved by
// shift, signed again with unitPlanKey (what the holder of the key could
// do; nobody else can).
func resign(t *testing.T, path, out string, shift time.Duration) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := engine.ReadPlanFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	pf.Created = pf.Created.Add(shift)
	var buf bytes.Buffer
	if err := pf.WriteSigned(&buf, engine.PlanKey(unitPlanKey)); err != nil {
		t.Fatal(err)
	}
	put(t, out, buf.String())
}

// TestPlanKeyFailsClosed: on the simulated quickstart cluster, a plan key
// that is set but empty is an error of plan --out, apply and show (a
// missing CI secret does not turn signing off); a signed plan records the
// ref it was made from, and apply refuses it from another ref, from a
// directory where it cannot tell its ref, and once it is older than
// --plan-max-age, each time saying which flag accepts it. Before, an empty key made unsigned plans with a warning and a
// signed plan applied from any branch at any age.
func TestPlanKeyFailsClosed(t *testing.T) {
	f := newFilesFixture(t)
	key := engine.PlanKeyEnv + "=" + unitPlanKey
	run := func(env []string, args ...string) result {
		t.Helper()
		r := runGpuform(t, env, append([]string{"--chdir", f.dir, "--no-color"}, args...)...)
		if strings.Contains(r.stdout+r.stderr, unitPlanKey) {
			t.Errorf("gpuform %s printed the key", strings.Join(args, " "))
		}
		return r
	}
	for _, empty := range []string{"", "   "} {
		env := []string{engine.PlanKeyEnv + "=" + empty, engine.RefEnv + "=main"}
		r := run(env, "plan", "--out", "empty.plan")
		wantExit(t, r, 1, "GPUFORM_PLAN_KEY is set but empty")
		if _, err := os.Stat(filepath.Join(f.dir, "empty.plan")); err == nil {
			t.Errorf("plan --out with an empty key %q wrote a plan file", empty)
		}
	}
	wantExit(t, run([]string{key, engine.RefEnv + "=refs/heads/main"}, "plan", "--out", "signed.plan"), 0)
	signed := filepath.Join(f.dir, "signed.plan")
	if b, _ := os.ReadFile(signed); !bytes.Contains(b, []byte(`"ref": "main"`)) || !bytes.Contains(b, []byte(`"signature": "hmac-sha256:`)) {
		t.Fatalf("the signed plan does not record its ref:\n%.400s", b)
	}
	wantExit(t, run([]string{engine.PlanKeyEnv + "=", engine.RefEnv + "=main"}, "apply", "--auto-approve", "signed.plan"), 1, "GPUFORM_PLAN_KEY is set but empty")
	wantExit(t, run([]string{engine.PlanKeyEnv + "= "}, "show", "signed.plan"), 1, "GPUFORM_PLAN_KEY is set but empty")
	resign(t, signed, filepath.Join(f.dir, "old.plan"), -25*time.Hour)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"another ref", []string{key, engine.RefEnv + "=feature"}, nil, `the signed plan was made from ref "main", but apply runs from "feature"`},
		{"another ref by flag", []string{key, engine.RefEnv + "=main"}, []string{"--ref-name", "feature"}, `apply runs from "feature"`},
		{"no ref known", []string{key}, nil, "apply cannot tell which ref it runs from"},
		{"older than a day", []string{key, engine.RefEnv + "=main"}, []string{"old.plan"}, "longer than --plan-max-age 24h0m0s"},
	} {
		args := append([]string{"apply", "--auto-approve"}, c.args...)
		if len(c.args) == 0 || c.args[0] != "old.plan" {
			args = append(args, "signed.plan")
		}
		wantExit(t, run(c.env, args...), 1, c.want, "--")
	}
	wantExit(t, run([]string{key}, "apply", "--auto-approve", "--plan-max-age", "48h", "--ref-name", "main", "old.plan"), 0)
}
