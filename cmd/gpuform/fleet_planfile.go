package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/files"
	"github.com/gpuform/gpuform/internal/textsafe"
	"github.com/gpuform/gpuform/providers/git"
)

// fleetPlanVersion is the version of the fleet plan file format: a JSON
// object whose members are saved plans (engine.PlanFile), each with its
// own checksum and signature and the fleet binding (engine.FleetBinding).
const fleetPlanVersion = "1"

// fleetPlanFile is a saved fleet plan as it is on disk.
type fleetPlanFile struct {
	FleetPlanVersion string            `json:"fleet_plan_version"`
	Members          []json.RawMessage `json:"members"`
}

// saveFleetPlan writes the members' plans to --out as one fleet plan file,
// each signed when a plan key is set; all is every member of the fleet.
// A fleet plan with a member that failed or has objects in the way is not
// saved.
func (g *globals) saveFleetPlan(f *planFlags, format string, plans []*memberPlan, all []fleetMember) error {
	for _, mp := range plans {
		if mp.failed() || mp.res.Plan.Summary.Conflicts > 0 {
			textsafe.Fprintf(g.stderr, "Error: the fleet plan was not saved to %s: cluster %q has no plan apply could take (%s).\n", f.out, mp.name, memberSummary(mp))
			return nil // the exit status says it: fleetPlanExit
		}
	}
	key, err := engine.LoadPlanKey(g.env)
	if err != nil {
		return err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id) // never fails (crypto/rand)
	bind := engine.FleetBinding{ID: hex.EncodeToString(id)}
	for _, m := range all {
		bind.Fleet = append(bind.Fleet, m.name)
	}
	for _, mp := range plans {
		bind.Planned = append(bind.Planned, engine.FleetMemberHash{Name: mp.name, ConfigHash: mp.res.Config.Hash})
	}
	out := fleetPlanFile{FleetPlanVersion: fleetPlanVersion}
	for _, mp := range plans {
		pf, err := engine.NewPlanFile(mp.res.Plan, version, mp.res.Config.Hash, mp.res.Context, f.allowSensitive)
		if err != nil {
			return fmt.Errorf("save the plan of cluster %q: %w", mp.name, err)
		}
		pf.Ref = git.RefName(mp.run.g.dir(), g.env, f.refName, f.ref)
		b := bind
		b.Member = mp.name
		pf.Fleet = &b
		var buf bytes.Buffer
		if err := pf.WriteSigned(&buf, key); err != nil {
			return fmt.Errorf("save the plan of cluster %q: %w", mp.name, err)
		}
		out.Members = append(out.Members, json.RawMessage(buf.Bytes()))
	}
	err = files.WriteAtomic(g.path(f.out), 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(out)
	})
	if err != nil {
		return fmt.Errorf("save plan to %s: %w", f.out, err)
	}
	if format == formatText {
		textsafe.Fprintf(g.stdout, "\nSaved the fleet plan of %d %s to %s. To apply exactly this plan, run:\n    gpuform apply --auto-approve %s\n", len(plans), pluralClusters(len(plans)), f.out, f.out)
	}
	return nil
}

// pluralClusters is "cluster" or "clusters" for n.
func pluralClusters(n int) string {
	if n == 1 {
		return "cluster"
	}
	return "clusters"
}

// isFleetPlan reports whether b is a fleet plan file rather than one
// cluster's saved plan.
func isFleetPlan(b []byte) bool {
	var head struct {
		V string `json:"fleet_plan_version"`
	}
	return json.Unmarshal(b, &head) == nil && head.V != ""
}

// readFleetPlan reads a fleet plan file: every member's plan read and
// authenticated as a saved plan is (engine.ReadPlanFile, Authenticate),
// then their bindings checked against each other (checkFleetBinding).
func readFleetPlan(b []byte, key engine.PlanKey) ([]*engine.PlanFile, error) {
	var fp fleetPlanFile
	if err := json.Unmarshal(b, &fp); err != nil {
		return nil, fmt.Errorf("read fleet plan file: %w", err)
	}
	if fp.FleetPlanVersion != fleetPlanVersion {
		return nil, fmt.Errorf("read fleet plan file: format version %q, this gpuform reads %q; make the plan again with this version", fp.FleetPlanVersion, fleetPlanVersion)
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
	if err := checkFleetBinding(pfs); err != nil {
		return nil, err
	}
	return pfs, nil
}

// checkFleetBinding checks that the member plans are exactly the members
// their bindings name, in order, all from one fleet plan: a member
// dropped from the file, added from another fleet plan or reordered is
// refused.
func checkFleetBinding(pfs []*engine.PlanFile) error {
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

// fleetChanged says how the fleet now (members, and hashes: each planned
// member's configuration hash now) differs from the one bind was made
// for: members added or removed, or a planned member's configuration
// changed; "" when it does not.
func fleetChanged(bind *engine.FleetBinding, members []string, hashes map[string]string) string {
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

// fleetHashes loads every planned member's configuration now and returns
// its hash, by name; a member whose configuration has errors is an error.
func (g *globals) fleetHashes(ctx context.Context, members []fleetMember, planned []engine.FleetMemberHash) (map[string]string, error) {
	hashes := map[string]string{}
	for _, m := range members {
		if !slices.ContainsFunc(planned, func(p engine.FleetMemberHash) bool { return p.Name == m.name }) {
			continue
		}
		r := g.member(m)
		cfg, diags := r.memberStack(m, connection{}).Validate(ctx)
		r.close()
		if diags.HasErrors() {
			g.writeDiags(cfg, diags)
			return nil, &exitError{code: 1}
		}
		hashes[m.name] = cfg.Hash
	}
	return hashes, nil
}
