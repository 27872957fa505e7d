package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// state list says what the stack owns by its inventory record: nothing
// before the first apply, then every object apply created, each with the
// address it came from, in text and JSON.
func TestStateList(t *testing.T) {
	dir := quickstartCopy(t)
	r := runGpuform(t, nil, "--no-color", "state", "list", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Stack quickstart in cluster simulated cluster ") || !strings.Contains(r.stdout, "has no inventory record") {
		t.Fatalf("state list before apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	a := runGpuform(t, nil, "--no-color", "apply", dir, "--auto-approve")
	added := regexp.MustCompile(`Apply complete! Resources: (\d+) added`).FindStringSubmatch(a.stdout)
	if a.code != 0 || added == nil {
		t.Fatalf("apply: exit %d\n%s\n%s", a.code, a.stdout, a.stderr)
	}
	r = runGpuform(t, nil, "--no-color", "state", "list", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "owns "+added[1]+" objects:") || !regexp.MustCompile(`(?m)^tenant\.research +ResourceQuota research/gpuform$`).MatchString(r.stdout) {
		t.Errorf("state list after apply: exit %d, want %s objects and tenant.research's quota\n%s\n%s", r.code, added[1], r.stdout, r.stderr)
	}
	j := runGpuform(t, nil, "state", "list", dir, "-o", "json")
	var doc struct {
		Stack    string `json:"stack"`
		Recorded bool   `json:"recorded"`
		Objects  []struct {
			Address, Kind, Namespace, Name string
		} `json:"objects"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &doc); err != nil || !doc.Recorded || doc.Stack != "quickstart" || added[1] != strconv.Itoa(len(doc.Objects)) {
		t.Errorf("state list -o json: %v, %+v\n%s", err, doc, j.stdout)
	}
}
