package fleet

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpuform/gpuform/engine"
)

// PlanVersion is the version of the fleet plan file format: a JSON object
// whose members are saved plans (engine.PlanFile), each with its own
// checksum and signature and the fleet binding (engine.FleetBinding).
const PlanVersion = "1"

// planFile is a saved fleet plan as it is on disk.
type planFile struct {
	FleetPlanVersion string            `json:"fleet_plan_version"`
	Members          []json.RawMessage `json:"members"`
}

// WritePlan writes the members' saved plans as one fleet plan file, each
// bound to the others (fleet: every member of the fleet, planned or not)
// and signed with key when it is not nil. pfs must be in fleet order.
func WritePlan(w io.Writer, pfs []*engine.PlanFile, fleet []string, key engine.PlanKey) error {
	id := make([]byte, 16)
	_, _ = rand.Read(id) // never fails (crypto/rand)
	bind := engine.FleetBinding{ID: hex.EncodeToString(id), Fleet: fleet}
	for _, pf := range pfs {
		bind.Planned = append(bind.Planned, engine.FleetMemberHash{Name: pf.Fleet.Member, ConfigHash: pf.ConfigHash})
	}
	out := planFile{FleetPlanVersion: PlanVersion}
	for _, pf := range pfs {
		b := bind
		b.Member = pf.Fleet.Member
		pf.Fleet = &b
		var buf bytes.Buffer
		if err := pf.WriteSigned(&buf, key); err != nil {
			return fmt.Errorf("save the plan of cluster %q: %w", b.Member, err)
		}
		out.Members = append(out.Members, json.RawMessage(buf.Bytes()))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}

// IsPlan reports whether b is a fleet plan file rather than one cluster's
// saved plan.
func IsPlan(b []byte) bool {
	var head struct {
		V string `json:"fleet_plan_version"`
	}
	return json.Unmarshal(b, &head) == nil && head.V != ""
}

// ReadPlan reads a fleet plan file: every member's plan read and
// authenticated as a saved plan is (engine.ReadPlanFile, Authenticate with
// key), then their bindings checked against each other: the file must
// hold exactly the members its bindings name, in order, all made in one
// fleet plan, so that a member dropped, added from another fleet plan or
// reordered is refused.
func ReadPlan(b []byte, key engine.PlanKey) ([]*engine.PlanFile, error) {
	var fp planFile
	if err := json.Unmarshal(b, &fp); err != nil {
		return nil, fmt.Errorf("read fleet plan file: %w", err)
	}
	if fp.FleetPlanVersion != PlanVersion {
		return nil, fmt.Errorf("read fleet plan file: format version %q, this gpuform reads %q; make the plan again with this version", fp.FleetPlanVersion, PlanVersion)
	}
	var pfs []*engine.PlanFile
	for i, raw := range fp.Members {
		pf, err := engine.ReadPlanFile(bytes.NewReader(raw))
		if err == nil {
			err = pf.Authenticate(key)
		}
		if err != nil {
			return nil, fmt.Errorf("member %d of the fleet plan: %w", i+1, err)
		}
		pfs = append(pfs, pf)
	}
	if err := checkBinding(pfs); err != nil {
		return nil, err
	}
	return pfs, nil
}

// checkBinding checks the member plans' bindings against each other (see
// ReadPlan).
func checkBinding(pfs []*engine.PlanFile) error {
	if len(pfs) == 0 || pfs[0].Fleet == nil {
		return fmt.Errorf("read fleet plan file: it holds no member plan of a fleet; make the plan again")
	}
	first := pfs[0].Fleet
	if len(pfs) != len(first.Planned) {
		return fmt.Errorf("read fleet plan file: it holds %d member plans, and was made with %d; make the plan again", len(pfs), len(first.Planned))
	}
	for i, pf := range pfs {
		b := pf.Fleet
		if b == nil || b.ID != first.ID || !slices.Equal(b.Fleet, first.Fleet) || !slices.Equal(b.Planned, first.Planned) {
			return fmt.Errorf("read fleet plan file: member %d was not made in the same fleet plan as the others; make the plan again", i+1)
		}
		if b.Member != first.Planned[i].Name || pf.ConfigHash != first.Planned[i].ConfigHash {
			return fmt.Errorf("read fleet plan file: member %d is the plan of cluster %q where the fleet plan has %q; make the plan again", i+1, b.Member, first.Planned[i].Name)
		}
	}
	return nil
}

// Changed says how the fleet now (members, in fleet order, and hashes:
// each planned member's configuration hash now) differs from the one bind
// was made for: members added or removed, a planned member's
// configuration changed, or the order; "" when it does not.
func Changed(bind *engine.FleetBinding, members []string, hashes map[string]string) string {
	var why []string
	for _, n := range members {
		if !slices.Contains(bind.Fleet, n) {
			why = append(why, fmt.Sprintf("cluster %q was added", n))
		}
	}
	for _, n := range bind.Fleet {
		if !slices.Contains(members, n) {
			why = append(why, fmt.Sprintf("cluster %q was removed", n))
		}
	}
	for _, p := range bind.Planned {
		if h, ok := hashes[p.Name]; ok && h != p.ConfigHash {
			why = append(why, fmt.Sprintf("the configuration of cluster %q changed", p.Name))
		}
	}
	if len(why) == 0 && !slices.Equal(members, bind.Fleet) {
		why = append(why, "the clusters are in another order")
	}
	return strings.Join(why, "; ")
}
