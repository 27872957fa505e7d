package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/kinds"
	"github.com/gpuform/gpuform/internal/files"
)

// PlanFileVersion is the version of the saved plan format.
//
// Version 2 added ref (the ref the plan was made from); version 1 files
// are refused with the advice to make the plan again.
const PlanFileVersion = "2"

// MaxPlanFileSize bounds what ReadPlanFile accepts.
const MaxPlanFileSize = 256 << 20

// PlanFile is a saved plan: exactly what apply will do, with what it was
// based on so that apply can refuse it when the cluster moved.
type PlanFile struct {
	FormatVersion  string `json:"format_version"`
	GpuformVersion string `json:"gpuform_version"`
	Stack          string `json:"stack"`
	// ConfigHash is a SHA-256 over the configuration files and variables.
	ConfigHash string    `json:"config_hash"`
	Created    time.Time `json:"created"`
	// Source is the server and context the plan was made against.
	Source  string `json:"source"`
	Context string `json:"context,omitempty"`
	// ReadVersions maps every object the plan read ("Kind ns/name" keys)
	// to its resourceVersion (Nodes: a hash of their labels and annotations).
	ReadVersions map[string]string `json:"read_versions"`
	Changes      []SavedChange     `json:"changes"`
	Summary      Summary           `json:"summary"`
	Warnings     []string          `json:"warnings,omitempty"`
	// Disruption lists the pods using GPUs on nodes the plan re-partitions.
	Disruption map[string][]string `json:"disruption,omitempty"`
	Throttles  map[string]int      `json:"throttles,omitempty"`
	// Repartitions are the re-partitioned nodes' GPUs now and after, for
	// show to draw (nothing apply acts on).
	Repartitions []capacity.Repartition `json:"repartitions,omitempty"`
	// ConfigSource is the commit the configuration was read at (absent
	// outside git) and whether the work tree was dirty.
	ConfigSource *ConfigSource `json:"config_source,omitempty"`
	// Ref is the git ref (branch) the plan was made from: --ref-name,
	// GPUFORM_REF, --ref, or the branch of the configuration's checkout;
	// "" when none was known. A signed plan is bound to it (CheckBinding).
	Ref string `json:"ref,omitempty"`
	// Policies are the stack's admission policies apply proves enforced
	// before it grants a tenant access (Plan.Policies).
	Policies []string `json:"policies,omitempty"`
	// PoliciesBoundAlike is Plan.PoliciesBoundAlike.
	PoliciesBoundAlike bool `json:"policies_bound_alike,omitempty"`
	// Migrate is Plan.Migrate: for a stack without a record yet, the
	// desired objects its first apply records.
	Migrate []Key `json:"migrate,omitempty"`
	// Destroy is Plan.Destroy: a destroy plan, which apply applies with
	// the safety limits of a destroy.
	Destroy bool `json:"destroy,omitempty"`
	// Targets is Plan.Targets: the addresses a targeted plan was narrowed to.
	Targets []string `json:"targets,omitempty"`
	// Fleet, on a member's plan inside a fleet plan file, binds it to that
	// file's members (FleetBinding); absent for a single cluster's plan.
	Fleet *FleetBinding `json:"fleet,omitempty"`
	// Checksum is a SHA-256 over everything else but Signature; an edited
	// file is refused. Anyone who edits the file can recompute it.
	Checksum string `json:"checksum"`
	// Signature is "hmac-sha256:" and the hex HMAC-SHA256, with the plan key
	// (GPUFORM_PLAN_KEY), of what the checksum covers; absent when no key
	// was configured. See Authenticate.
	Signature string `json:"signature,omitempty"`
}

// SavedChange is one change of a saved plan.
type SavedChange struct {
	Address    string         `json:"address"`
	Key        Key            `json:"key"`
	APIVersion string         `json:"api_version"`
	Action     Action         `json:"action"`
	After      map[string]any `json:"after,omitempty"`
	// Before is the live object as read (without managedFields).
	Before    map[string]any `json:"before,omitempty"`
	Fields    []FieldDiff    `json:"fields,omitempty"`
	DependsOn []Key          `json:"depends_on,omitempty"`
	Sensitive bool           `json:"sensitive,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	Wait      string         `json:"wait,omitempty"`
	Throttle  string         `json:"throttle,omitempty"`
}

// ErrSensitivePlan refuses to save a plan holding sensitive values.
var ErrSensitivePlan = errors.New("the plan holds values of sensitive variables, which a plan file would store in clear text; plan without --out, or pass --allow-sensitive-in-plan and protect the file")

// NewPlanFile captures p for saving.
func NewPlanFile(p *Plan, version, configHash, context string, allowSensitive bool) (*PlanFile, error) {
	pf := &PlanFile{
		FormatVersion: PlanFileVersion, GpuformVersion: version, Stack: p.Stack, ConfigHash: configHash,
		Created: time.Now().UTC().Truncate(time.Second), Source: p.Source, Context: context,
		ReadVersions: map[string]string{}, Summary: p.Summary, Warnings: WarningTexts(p.Warnings),
		Disruption: p.Disruption, Throttles: p.Throttles, ConfigSource: p.ConfigSource, Repartitions: p.Repartitions,
		Policies: p.Policies, PoliciesBoundAlike: p.PoliciesBoundAlike,
		Migrate: p.Migrate, Destroy: p.Destroy, Targets: p.Targets,
	}
	for k, v := range p.ReadVersions {
		pf.ReadVersions[keyString(k)] = v
	}
	for _, c := range p.Changes {
		if c.Sensitive && !allowSensitive {
			return nil, ErrSensitivePlan
		}
		sc := SavedChange{Address: c.Address, Key: c.Key, APIVersion: c.APIVersion, Action: c.Action, Fields: c.Fields, DependsOn: c.DependsOn, Sensitive: c.Sensitive, Reason: c.Reason, Wait: c.Wait, Throttle: c.Throttle}
		if c.After != nil {
			sc.After = c.After.Object
		}
		if c.Before != nil {
			sc.Before = CleanLive(c.Before.Object)
			meta, _ := sc.Before["metadata"].(map[string]any)
			if meta != nil {
				meta["resourceVersion"] = c.Before.GetResourceVersion()
			}
		}
		pf.Changes = append(pf.Changes, sc)
	}
	return pf, nil
}

// Plan rebuilds the plan the file holds, its summary counted from its
// changes.
func (pf *PlanFile) Plan() *Plan {
	p := &Plan{Stack: pf.Stack, Source: pf.Source, Summary: Summary{Unchanged: pf.Summary.Unchanged}, Warnings: WarningsOf(pf.Warnings), ReadVersions: map[Key]string{}, Disruption: pf.Disruption, Throttles: pf.Throttles, ConfigSource: pf.ConfigSource, Repartitions: pf.Repartitions, Policies: pf.Policies, PoliciesBoundAlike: pf.PoliciesBoundAlike, Migrate: pf.Migrate, Destroy: pf.Destroy, Targets: pf.Targets}
	for _, sc := range pf.Changes {
		c := &Change{Address: sc.Address, Key: sc.Key, APIVersion: sc.APIVersion, Action: sc.Action, Fields: sc.Fields, DependsOn: sc.DependsOn, Sensitive: sc.Sensitive, Reason: sc.Reason, Wait: sc.Wait, Throttle: sc.Throttle}
		if sc.After != nil {
			c.After = &unstructured.Unstructured{Object: sc.After}
		}
		if sc.Before != nil {
			c.Before = &unstructured.Unstructured{Object: sc.Before}
		}
		p.Changes = append(p.Changes, c)
	}
	// The counts come from the changes, never from the file: the safety
	// limits (--max-deletes) read them.
	p.Summary.count(p.Changes)
	return p
}

// keyString renders a key as it appears in read_versions.
func keyString(k Key) string {
	if k.Group == "" {
		return k.String()
	}
	return k.Kind + "." + k.Group + " " + strings.TrimPrefix(k.String(), k.Kind+" ")
}

// canonical is what the checksum and the signature cover: the file as JSON
// with empty Checksum and Signature fields (encoding/json writes struct
// fields in order and map keys sorted, so equal content gives equal bytes).
func (pf *PlanFile) canonical() ([]byte, error) {
	cp := *pf
	cp.Checksum, cp.Signature = "", ""
	return json.Marshal(&cp)
}

// sum computes the checksum over the canonical bytes.
func (pf *PlanFile) sum() (string, error) {
	b, err := pf.canonical()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Write saves the plan file as JSON with its checksum, unsigned.
func (pf *PlanFile) Write(w io.Writer) error { return pf.WriteSigned(w, nil) }

// WriteSigned saves the plan file as JSON with its checksum and, when key
// is not nil, its signature with key.
func (pf *PlanFile) WriteSigned(w io.Writer, key PlanKey) error {
	b, err := pf.canonical()
	if err != nil {
		return fmt.Errorf("checksum plan: %w", err)
	}
	h := sha256.Sum256(b)
	pf.Checksum, pf.Signature = hex.EncodeToString(h[:]), ""
	if key != nil {
		pf.Signature = key.sign(b)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(pf)
}

// LoadPlanFile reads the saved plan at path (a regular file of at most
// MaxPlanFileSize bytes: a FIFO or a device is an error, not a hang) with
// ReadPlanFile and checks its signature with the plan key of env
// (LoadPlanKey, Authenticate), which it returns.
func LoadPlanFile(path string, env []string) (*PlanFile, PlanKey, error) {
	key, err := LoadPlanKey(env)
	if err != nil {
		return nil, nil, err
	}
	b, err := files.ReadLimited(path, MaxPlanFileSize)
	if err != nil {
		return nil, nil, fmt.Errorf("open plan file: %w", err)
	}
	pf, err := ReadPlanFile(bytes.NewReader(b))
	if err == nil {
		err = pf.Authenticate(key)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return pf, key, nil
}

// ReadPlanFile reads and verifies a saved plan: its size, format version and
// checksum, and that every change is one gpuform can have planned (see
// check). It does not check the signature (Authenticate) or the cluster
// (StaleObjects, Recheck).
func ReadPlanFile(r io.Reader) (*PlanFile, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPlanFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read plan file: %w", err)
	}
	if len(b) > MaxPlanFileSize {
		return nil, fmt.Errorf("read plan file: larger than %d bytes", MaxPlanFileSize)
	}
	var pf PlanFile
	if err := json.Unmarshal(b, &pf); err != nil {
		return nil, fmt.Errorf("read plan file: not a gpuform plan: %w", err)
	}
	if pf.FormatVersion != PlanFileVersion {
		return nil, fmt.Errorf("read plan file: format version %q, this gpuform reads %q; make the plan again with this version", pf.FormatVersion, PlanFileVersion)
	}
	sum, err := pf.sum()
	if err != nil {
		return nil, err
	}
	if sum != pf.Checksum {
		return nil, errors.New("read plan file: the checksum does not match its content, so the file was edited or damaged after gpuform wrote it; make the plan again")
	}
	if err := pf.check(kinds.Builtin()); err != nil {
		return nil, fmt.Errorf("read plan file: %w; make the plan again", err)
	}
	if err := checkDependencies(pf.Plan().toApply()); err != nil {
		return nil, fmt.Errorf("read plan file: %w; make the plan again", err)
	}
	return &pf, nil
}

// toApply returns the changes an apply makes in dependency order: every
// change but deletes (which run after them) and conflicts (never made).
func (p *Plan) toApply() []*Change {
	var out []*Change
	for _, c := range p.Changes {
		if c.Action != ActionDelete && c.Action != ActionConflict {
			out = append(out, c)
		}
	}
	return out
}

// StaleObjects compares the versions a saved plan read with the cluster
// now: objects that changed, vanished, or appeared in the stack since.
func (pf *PlanFile) StaleObjects(live *Live) []string {
	now := map[string]string{}
	for k, u := range live.Objects {
		now[keyString(k)] = ReadVersion(u)
	}
	for k, u := range live.Foreign {
		now[keyString(k)] = ReadVersion(u)
	}
	for _, n := range live.Nodes {
		now[keyString(KeyOf(n))] = NodeVersion(n)
	}
	for _, cp := range live.ClusterPolicies {
		now[keyString(KeyOf(cp))] = cp.GetResourceVersion()
	}
	var out []string
	for k, v := range pf.ReadVersions {
		cur, ok := now[k]
		switch {
		case !ok && v == versionDeleting:
			// It was being deleted when planned, and the deletion finished.
		case !ok:
			out = append(out, k+" (deleted since the plan)")
		case cur != v:
			out = append(out, k+" (changed since the plan)")
		}
	}
	for k := range live.Objects {
		if _, ok := pf.ReadVersions[keyString(k)]; !ok {
			out = append(out, keyString(k)+" (created in the stack since the plan)")
		}
	}
	for k := range live.Foreign {
		if _, ok := pf.ReadVersions[keyString(k)]; !ok {
			out = append(out, keyString(k)+" (created outside the stack since the plan, where the plan creates one)")
		}
	}
	sort.Strings(out)
	return out
}

// versionDeleting is the version a plan records for an object that is being
// deleted (a terminating Namespace): its resourceVersion moves while the
// namespace controller empties it, which changes nothing gpuform plans.
const versionDeleting = "deleting"

// ReadVersion is the version a plan records for a live object: its
// resourceVersion, or versionDeleting once its deletion has begun.
func ReadVersion(u *unstructured.Unstructured) string {
	md, _ := u.Object["metadata"].(map[string]any)
	// Read from the one map: a plan reads every live object's.
	if ts, ok := md["deletionTimestamp"]; ok && ts != "" && u.GetDeletionTimestamp() != nil {
		return versionDeleting
	}
	rv, _ := md["resourceVersion"].(string)
	return rv
}

// NodeVersion is the version a plan records for a Node: a hash of its
// labels and annotations, which is all gpuform reads of it. (A Node's
// resourceVersion moves with every status heartbeat.)
func NodeVersion(n *unstructured.Unstructured) string {
	b, _ := json.Marshal([]any{n.GetLabels(), n.GetAnnotations()})
	h := sha256.Sum256(b)
	return "meta:" + hex.EncodeToString(h[:8])
}
