package engine_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/engine"
)

// signedAt is the plan of nodePlan made from ref at created, signed with
// planKey (unsigned when sign is false), as ReadPlanFile reads it back.
func signedAt(t *testing.T, ref string, created time.Time, sign bool) *engine.PlanFile {
	t.Helper()
	var pf engine.PlanFile
	src := nodePlan(t, "gpu-operator", nil)
	key := engine.PlanKey(nil)
	if sign {
		key = planKey
	}
	b := reseal(t, src, func(p *engine.PlanFile) { p.Ref, p.Created = ref, created })
	read, err := engine.ReadPlanFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	pf = *read
	var buf bytes.Buffer
	if err := pf.WriteSigned(&buf, key); err != nil {
		t.Fatal(err)
	}
	out, err := engine.ReadPlanFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPlanFileBinding: a signed plan is bound to the ref it was made from
// and expires. apply refuses one older than its limit, one made in the
// future, one from another ref, one that names no ref, and one it cannot
// compare with its own ref; each refusal says which flag accepts it. The
// ref and the time are covered by the signature: edited, the file no
// longer authenticates. Before, a signed plan was good forever and from
// any branch.
func TestPlanFileBinding(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	fresh := now.Add(-time.Hour)
	day := 24 * time.Hour
	cases := []struct {
		name string
		pf   *engine.PlanFile
		b    engine.PlanBinding
		want string // "" for accepted
	}{
		{"same ref, fresh", signedAt(t, "main", fresh, true), engine.PlanBinding{Ref: "main", MaxAge: day}, ""},
		{"older than the limit", signedAt(t, "main", now.Add(-25*time.Hour), true), engine.PlanBinding{Ref: "main", MaxAge: day}, "--plan-max-age"},
		{"old, no limit", signedAt(t, "main", now.Add(-900*time.Hour), true), engine.PlanBinding{Ref: "main"}, ""},
		{"made in the future", signedAt(t, "main", now.Add(time.Hour), true), engine.PlanBinding{Ref: "main", MaxAge: day}, "in the future"},
		{"another ref", signedAt(t, "feature", fresh, true), engine.PlanBinding{Ref: "main", MaxAge: day}, `made from ref "feature", but apply runs from "main"`},
		{"another ref, allowed", signedAt(t, "feature", fresh, true), engine.PlanBinding{Ref: "main", MaxAge: day, AllowOtherRef: true}, ""},
		{"apply cannot tell its ref", signedAt(t, "main", fresh, true), engine.PlanBinding{MaxAge: day}, "--ref-name"},
		{"the plan names no ref", signedAt(t, "", fresh, true), engine.PlanBinding{Ref: "main", MaxAge: day}, "does not say which ref"},
		{"neither knows a ref", signedAt(t, "", fresh, true), engine.PlanBinding{MaxAge: day}, "does not say which ref"},
		{"unsigned: bound to nothing", signedAt(t, "feature", now.Add(-900*time.Hour), false), engine.PlanBinding{Ref: "main", MaxAge: day}, ""},
	}
	for _, c := range cases {
		c.b.Now = now
		err := c.pf.CheckBinding(c.b)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a refusal with %q", c.name, err, c.want)
		}
	}
	signed := nodePlan(t, "gpu-operator", planKey)
	for name, edit := range map[string]func(*engine.PlanFile){
		"ref":     func(p *engine.PlanFile) { p.Ref = "main" },
		"created": func(p *engine.PlanFile) { p.Created = now },
	} {
		pf, err := engine.ReadPlanFile(bytes.NewReader(resealKeepingSignature(t, signed, edit)))
		if err != nil {
			t.Fatal(err)
		}
		if err := pf.Authenticate(planKey); err == nil || !strings.Contains(err.Error(), "signature does not match") {
			t.Errorf("%s edited: %v, want the signature refused", name, err)
		}
	}
}
