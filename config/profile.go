package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// A MIG profile has one spelling, NVIDIA's: lower case ("3g.40gb",
// "1g.10gb+me"), which nvidia-smi prints, the catalog holds and the device
// plugin's resources carry (nvidia.com/mig-3g.40gb). Another spelling
// would validate against nothing and plan a resource no node advertises,
// so it is refused at its key with the right one.

// profileName reports the one right spelling of name and whether name is it.
func profileName(name string) (string, bool) {
	right := strings.ToLower(name)
	return right, right == name
}

// checkProfile fails for a profile name with another spelling than
// NVIDIA's, at rng.
func (d *decoder) checkProfile(attr, name string, rng hcl.Range) {
	if right, ok := profileName(name); !ok {
		d.fail("MIG profile spelled in upper case",
			fmt.Sprintf("%s names profile %q: MIG profile names are lower case, as nvidia-smi and the device plugin's resources spell them (nvidia.com/mig-%s). Write %q.", attr, name, right, right),
			rng)
	}
}

// layoutSlices is a layout's slices attribute (mig_layout or device
// group): profile -> count, each profile spelled as NVIDIA does and each
// count at least 1 (a profile with no instance is left out, not set to 0).
func (d *decoder) layoutSlices(name string) map[string]int {
	m := d.profileMap(name)
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if m[p] == 0 {
			d.fail("No instances of a MIG profile",
				fmt.Sprintf("%s[%q] is 0: a layout lists each profile it cuts at least once. Leave %q out, or give it a count of 1 or more.", name, p, p),
				d.meta.KeyRange(name, p))
		}
	}
	return m
}

// profileMap is an attribute of profile -> count, each profile spelled as
// NVIDIA does.
func (d *decoder) profileMap(name string) map[string]int {
	m := d.intMap(name)
	for _, p := range slices.Sorted(maps.Keys(m)) {
		d.checkProfile(name, p, d.meta.KeyRange(name, p))
	}
	return m
}
