package engine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// planKey and otherKey are plan keys of the tests (64 hex digits, as
// openssl rand -hex 32 makes them).
var (
	planKey  = engine.PlanKey(strings.Repeat("5eed", 16))
	otherKey = engine.PlanKey(strings.Repeat("0bad", 16))
)

// nodePlan is the saved plan of examples/bank (with the MIG backend
// given) against a cluster with one node per pool and a ClusterPolicy
// pointed nowhere: creates, Node label or annotation changes that wait for
// a MIG state under a throttle, and a ClusterPolicy update; signed with
// key when it is not nil.
func nodePlan(t *testing.T, backend string, key engine.PlanKey) []byte {
	t.Helper()
	d, err := compile.Compile(enginetest.LoadExample(t, "bank", `scheduler = "kueue"`, `scheduler = "kueue"
  mig_backend = "`+backend+`"`))
	if err != nil {
		t.Fatal(err)
	}
	live := &engine.Live{Source: "x", ClusterPolicies: []*unstructured.Unstructured{fuzzClusterPolicy("")}}
	for _, np := range d.Pools {
		live.Nodes = append(live.Nodes, enginetest.NodeFor(np))
	}
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	waits := 0
	for _, c := range p.Changes {
		if c.Wait != "" {
			waits++
		}
	}
	if waits == 0 || len(p.Throttles) == 0 {
		t.Fatalf("%s: the plan has %d MIG waits and throttles %v; want both", backend, waits, p.Throttles)
	}
	pf, err := engine.NewPlanFile(p, "test", "hash", "ctx", false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pf.WriteSigned(&buf, key); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// resealKeepingSignature is reseal that leaves the signature as it was:
// an editor who recomputes the checksum but cannot sign.
func resealKeepingSignature(t *testing.T, src []byte, edit func(pf *engine.PlanFile)) []byte {
	t.Helper()
	var orig engine.PlanFile
	if err := json.Unmarshal(src, &orig); err != nil {
		t.Fatal(err)
	}
	var pf engine.PlanFile
	if err := json.Unmarshal(reseal(t, src, edit), &pf); err != nil {
		t.Fatal(err)
	}
	pf.Signature = orig.Signature
	b, err := json.MarshalIndent(&pf, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlanFileSignature: a plan file signed with the plan key (HMAC-SHA256)
// is accepted with that key only. Edited and re-checksummed, with the
// signature kept or removed, it is refused with the key; signed, it is
// refused without one (it cannot be checked). Unsigned, it is accepted
// without a key. Real plans with Node and ClusterPolicy changes on both MIG
// backends pass ReadPlanFile's scope checks. Before, a re-checksummed file
// was accepted: the checksum is no signature.
func TestPlanFileSignature(t *testing.T) {
	read := func(t *testing.T, b []byte) *engine.PlanFile {
		t.Helper()
		pf, err := engine.ReadPlanFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("ReadPlanFile: %v", err)
		}
		return pf
	}
	for _, backend := range []string{"gpu-operator", "agent"} {
		signed := nodePlan(t, backend, planKey)
		if pf := read(t, signed); !pf.Signed() || !strings.HasPrefix(pf.Signature, "hmac-sha256:") || pf.Authenticate(planKey) != nil {
			t.Fatalf("%s: the signed plan does not authenticate with its key: %q, %v", backend, pf.Signature, pf.Authenticate(planKey))
		}
		unsigned := nodePlan(t, backend, nil)
		if pf := read(t, unsigned); pf.Signed() || pf.Authenticate(nil) != nil {
			t.Errorf("%s: an unsigned plan without a key: signed %v, %v; want accepted", backend, pf.Signed(), pf.Authenticate(nil))
		}
		raiseQuota := func(pf *engine.PlanFile) {
			for i := range pf.Changes {
				if pf.Changes[i].Key.Kind == "ResourceQuota" {
					pf.Changes[i].After["spec"] = map[string]any{"hard": map[string]any{"requests.nvidia.com/gpu": "1000"}}
					return
				}
			}
			t.Fatal("no ResourceQuota in the plan")
		}
		cases := []struct {
			name string
			file []byte
			key  engine.PlanKey
			want string
		}{
			{"signed, another key", signed, otherKey, "signature does not match"},
			{"signed, no key", signed, nil, "the plan file is signed, but no plan key is configured"},
			{"edited, signature kept", resealKeepingSignature(t, signed, raiseQuota), planKey, "signature does not match"},
			{"edited, signature removed", reseal(t, signed, raiseQuota), planKey, "the plan file is not signed, but a plan key is configured (GPUFORM_PLAN_KEY)"},
			{"unsigned, with a key", unsigned, planKey, "the plan file is not signed"},
		}
		for _, c := range cases {
			err := read(t, c.file).Authenticate(c.key)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: %v, want a refusal with %q", backend, c.name, err, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), string(planKey)) || strings.Contains(err.Error(), string(otherKey))) {
				t.Errorf("%s: %s: the error holds the key: %v", backend, c.name, err)
			}
		}
	}
}

// TestLoadPlanKey: the key comes from GPUFORM_PLAN_KEY (the last one, white
// space trimmed); a short key is refused without being printed.
func TestLoadPlanKey(t *testing.T) {
	key, err := engine.LoadPlanKey([]string{"HOME=/x", "GPUFORM_PLAN_KEY=short", "GPUFORM_PLAN_KEY= " + string(planKey) + "\n"})
	if err != nil || string(key) != string(planKey) {
		t.Errorf("LoadPlanKey = %q, %v; want the last value, trimmed", key, err)
	}
	if key, err := engine.LoadPlanKey([]string{"HOME=/x"}); key != nil || err != nil {
		t.Errorf("no key: %q, %v; want none", key, err)
	}
	// Set but empty is a missing secret, not "no signing": refused.
	for _, v := range []string{"", "  ", "\n\t"} {
		key, err := engine.LoadPlanKey([]string{"GPUFORM_PLAN_KEY=" + string(planKey), "GPUFORM_PLAN_KEY=" + v})
		if key != nil || err == nil || !strings.Contains(err.Error(), "GPUFORM_PLAN_KEY is set but empty") {
			t.Errorf("an empty key %q: %q, %v; want a refusal", v, key, err)
		}
	}
	_, err = engine.LoadPlanKey([]string{"GPUFORM_PLAN_KEY=hunter2-hunter2"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("a 15-byte key: %v; want a refusal that does not print it", err)
	}
}
