package nvml

import (
	"bytes"
	"encoding/json"
	"fmt"
)

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

// MarshalJSON writes the mig-parted shape: {"devices": "all" or [indexes],
// "mig-enabled": bool, "mig-devices": {profile: count}}.
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

// AllGPUs returns the layout that gives every GPU the same slices, with the
// convention of mig.OperatorConfigs: nil slices turn MIG off, a non-nil
// (possibly empty) map turns it on with those instances.
func AllGPUs(slices map[string]int) Layout {
	if slices == nil {
		return Layout{{All: true}}
	}
	return Layout{{All: true, Enabled: true, Slices: slices}}
}

// resolve maps each GPU index below n that the layout names to its entry.
func (l Layout) resolve(n int) (map[int]LayoutEntry, error) {
	out := map[int]LayoutEntry{}
	for i, e := range l {
		if !e.Enabled {
			for prof, c := range e.Slices {
				if c != 0 {
					return nil, fmt.Errorf("layout entry %d turns MIG off but asks for %d x %s", i, c, prof)
				}
			}
		}
		switch {
		case e.All && len(e.Indexes) > 0:
			return nil, fmt.Errorf("layout entry %d sets both All and Indexes", i)
		case e.All:
			for j := 0; j < n; j++ {
				out[j] = e
			}
		case len(e.Indexes) > 0:
			for _, j := range e.Indexes {
				if j < 0 || j >= n {
					return nil, fmt.Errorf("layout entry %d names GPU %d, but this machine has %d GPUs", i, j, n)
				}
				out[j] = e
			}
		default:
			return nil, fmt.Errorf("layout entry %d names no GPU (set All or Indexes)", i)
		}
	}
	return out, nil
}
