package drift

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/mig"
)

// Class says why the live cluster differs from the configuration at a
// git ref. docs/drift.md states the rules; Classify implements them.
type Class string

// The drift classes, in report order.
const (
	// LiveEdit: a managed object (or a node's pool labels) differs from
	// the configuration it was applied from: someone changed it by hand.
	LiveEdit Class = "live-edit"
	// Unapplied: the configuration at the ref differs from the
	// configuration the object was applied from: the ref is not applied yet.
	Unapplied Class = "unapplied"
	// Missing: an object that was applied is gone from the cluster.
	Missing Class = "missing"
	// Hardware: a pool's node has other GPUs, another driver, a failed
	// MIG state or MIG instances other than its layout.
	Hardware Class = "hardware"
)

// Classes lists every class in report order.
func Classes() []Class { return []Class{LiveEdit, Unapplied, Missing, Hardware} }

// Item is one object that drifted, in one class. An object whose
// fields drifted for two reasons (a hand edit and an unapplied change) is
// two items, each with its own fields.
type Item struct {
	Class      Class  `json:"class"`
	Address    string `json:"address"`
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Action is what apply (and drift --fix) would do to the object:
	// create, update, delete or conflict; empty for hardware findings that
	// apply cannot fix.
	Action engine.Action `json:"action,omitempty"`
	// AppliedCommit is the gpuform.dev/commit stamp of the live object (for
	// nodes: the newest commit applied to the stack).
	AppliedCommit string `json:"applied_commit,omitempty"`
	// Fields are the differing fields: before is the live value, after the
	// value at the ref (what apply would set), as in a plan.
	Fields []engine.FieldDiff `json:"fields"`
	// Details say, in words, what is wrong.
	Details   []string `json:"details"`
	Sensitive bool     `json:"sensitive,omitempty"`
}

// Key returns the item's object key.
func (it *Item) Key() engine.Key {
	gvk := schema.FromAPIVersionAndKind(it.APIVersion, it.Kind)
	return engine.Key{Group: gvk.Group, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name}
}

// Report is the outcome of one drift check of a stack.
type Report struct {
	Stack string
	// Cluster describes the cluster read (Live.Source).
	Cluster string
	// Commit is the commit the configuration was read at ("<sha>-dirty" for
	// a dirty work tree, "" outside git); ConfigSource describes it (set by
	// the caller).
	Commit       string
	ConfigSource *engine.ConfigSource
	Items        []Item
	Warnings     []string
	// Plan counts what apply would do to remove the drift.
	Plan engine.Summary
	// CheckedAt is when the cluster was read (set by the caller).
	CheckedAt time.Time
}

// InSync reports whether nothing drifted.
func (r *Report) InSync() bool { return len(r.Items) == 0 }

// Counts returns the number of drifted objects per class (every class
// present, zero when none).
func (r *Report) Counts() map[Class]int {
	classes := Classes()
	out := make(map[Class]int, len(classes))
	for _, c := range classes {
		out[c] = 0
	}
	for _, it := range r.Items {
		out[it.Class]++
	}
	return out
}

// Fixable reports whether apply can remove some of the drift: anything but
// hardware findings without a planned change.
func (r *Report) Fixable() bool {
	return slices.ContainsFunc(r.Items, func(it Item) bool { return it.Action != "" })
}

// AppliedConfig is the desired state compiled from the configuration at a
// commit that live objects carry in gpuform.dev/commit.
type AppliedConfig struct {
	Commit string
	// Desired is nil when the configuration at the commit could not be
	// loaded (not in the repository, or no longer valid); the entry still
	// says where the commit stands in time.
	Desired *engine.Desired
}

// Options give Classify what it cannot read from the plan.
type Options struct {
	// Applied are the configurations at the commits stamped on live
	// objects, newest commit first; the ref's commit may be among them.
	// Without them Classify falls back to comparing stamps (docs/drift.md).
	Applied []AppliedConfig
	// Config and Catalog enable the hardware checks of the pools' nodes
	// (GPU model, count, driver, MIG state and instances).
	Config  *config.Config
	Catalog *mig.Catalog
}

// ShortCommit shortens a commit hash for messages ("<12 hex>", keeping a
// -dirty suffix).
func ShortCommit(s string) string {
	if s == "" {
		return "(no commit)"
	}
	base, dirty := strings.CutSuffix(s, "-dirty")
	if len(base) > 12 {
		base = base[:12]
	}
	if dirty {
		return base + "-dirty"
	}
	return base
}
