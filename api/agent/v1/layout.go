package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MIGLayout is the value of annotation AnnotMIGLayout: one named layout for
// the node's GPUs. It marshals to compact JSON with the keys of every object
// in sorted order, {"config":[...],"gpu":...,"name":...}, the bytes gpuform
// has always written (and compares against the node's annotation).
type MIGLayout struct {
	// Name is the mig_layout block's name.
	Name string `json:"name"`
	// GPU is the catalog key of the GPU model the layout is for; the agent
	// refuses the layout on other GPUs. Empty means any.
	GPU string `json:"gpu"`
	// Config is the layout as mig-parted config entries.
	Config Layout `json:"config"`
}

// migLayoutFields is MIGLayout without its methods.
type migLayoutFields MIGLayout

// MarshalJSON writes the layout as compact JSON with sorted keys.
func (l MIGLayout) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(migLayoutFields(l))
	if err != nil {
		return nil, err
	}
	return sortedKeys(b)
}

// Annotation returns the layout as the value of AnnotMIGLayout.
func (l MIGLayout) Annotation() (string, error) {
	b, err := json.Marshal(l)
	return string(b), err
}

// ParseMIGLayout decodes an AnnotMIGLayout annotation. It rejects malformed
// JSON, entries that are not mig-parted's shape (see
// LayoutEntry.UnmarshalJSON) and a layout without entries.
func ParseMIGLayout(s string) (*MIGLayout, error) {
	var l migLayoutFields
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, err
	}
	if len(l.Config) == 0 {
		return nil, errors.New("no config entries")
	}
	out := MIGLayout(l)
	return &out, nil
}

// sortedKeys re-encodes the JSON value b with the keys of every object
// sorted, numbers as written.
func sortedKeys(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Layout is the desired MIG state of a machine's GPUs: a list of entries in
// the shape of a mig-parted config (`devices`, `mig-enabled`,
// `mig-devices`), and it marshals to that shape in JSON (and so in YAML
// through sigs.k8s.io/yaml). A GPU matched by several entries takes the
// last; a GPU matched by none is left as it is.
type Layout []LayoutEntry

// LayoutEntry is the desired MIG state of some GPUs.
type LayoutEntry struct {
	// Indexes are the NVML indexes of the GPUs the entry applies to
	// (mig-parted `devices: [0, 1]`).
	Indexes []int `json:"-"`
	// All applies the entry to every GPU (mig-parted `devices: all`).
	All bool `json:"-"`
	// Enabled is the MIG mode (mig-parted `mig-enabled`).
	Enabled bool `json:"mig-enabled"`
	// Slices are the GPU instances per GPU, profile name -> count
	// (mig-parted `mig-devices`). Each gets one compute instance that uses
	// all of its compute slices. Must be empty when Enabled is false.
	Slices map[string]int `json:"mig-devices,omitempty"`
}

// layoutEntryJSON is LayoutEntry on the wire.
type layoutEntryJSON struct {
	Devices json.RawMessage `json:"devices"`
	Enabled bool            `json:"mig-enabled"`
	Slices  map[string]int  `json:"mig-devices,omitempty"`
}

// layoutEntryOn is LayoutEntry on the wire when MIG is on: its mig-devices
// are written even when empty ({}), as mig-parted's all-enabled config is.
type layoutEntryOn struct {
	Devices json.RawMessage `json:"devices"`
	Enabled bool            `json:"mig-enabled"`
	Slices  map[string]int  `json:"mig-devices"`
}

// MarshalJSON writes the mig-parted shape: {"devices": "all" or [indexes],
// "mig-enabled": bool, "mig-devices": {profile: count}}. mig-devices is
// written when MIG is on (as {} when there are none) or when there are
// slices; it is left out when MIG is off without slices.
func (e LayoutEntry) MarshalJSON() ([]byte, error) {
	var devices []byte
	var err error
	if e.All {
		devices = []byte(`"all"`)
	} else {
		idx := e.Indexes
		if idx == nil {
			idx = []int{}
		}
		if devices, err = json.Marshal(idx); err != nil {
			return nil, err
		}
	}
	if e.Enabled {
		slices := e.Slices
		if slices == nil {
			slices = map[string]int{}
		}
		return json.Marshal(layoutEntryOn{Devices: devices, Enabled: true, Slices: slices})
	}
	return json.Marshal(layoutEntryJSON{Devices: devices, Enabled: e.Enabled, Slices: e.Slices})
}

// UnmarshalJSON reads the mig-parted shape written by MarshalJSON. It
// rejects other keys, mig-parted's `device-filter` included: an entry that
// applies to fewer GPUs than it says must not apply to all of them.
func (e *LayoutEntry) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	if _, ok := keys["device-filter"]; ok {
		return fmt.Errorf(`layout entry has a "device-filter", which gpuform does not support; name the GPUs in "devices"`)
	}
	var w layoutEntryJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("layout entry: %w", err)
	}
	out := LayoutEntry{Enabled: w.Enabled, Slices: w.Slices}
	d := bytes.TrimSpace(w.Devices)
	switch {
	case len(d) == 0 || bytes.Equal(d, []byte("null")):
		return fmt.Errorf(`layout entry has no "devices" (want "all" or a list of GPU indexes)`)
	case d[0] == '"':
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			return err
		}
		if s != "all" {
			return fmt.Errorf(`layout entry "devices" is %q, want "all" or a list of GPU indexes`, s)
		}
		out.All = true
	default:
		if err := json.Unmarshal(d, &out.Indexes); err != nil {
			return fmt.Errorf(`layout entry "devices": want "all" or a list of GPU indexes: %w`, err)
		}
	}
	*e = out
	return nil
}
