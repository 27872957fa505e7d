package kubernetes

import "testing"

// TestRemovePatch checks the JSON patch of ApplyWhole: a test of the
// resourceVersion first, then a removal per path, each a JSON pointer
// with "~" and "/" escaped (a quota's resource names hold slashes).
func TestRemovePatch(t *testing.T) {
	cases := []struct {
		rv    string
		paths [][]string
		want  string
	}{
		{"7", [][]string{{"spec", "scopeSelector"}},
			`[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"remove","path":"/spec/scopeSelector"}]`},
		{"8", [][]string{{"spec", "hard", "requests.nvidia.com/gpu"}, {"metadata", "ownerReferences"}, {"spec", "a~b"}},
			`[{"op":"test","path":"/metadata/resourceVersion","value":"8"},{"op":"remove","path":"/spec/hard/requests.nvidia.com~1gpu"},{"op":"remove","path":"/metadata/ownerReferences"},{"op":"remove","path":"/spec/a~0b"}]`},
	}
	for _, tc := range cases {
		got, err := removePatch(tc.rv, tc.paths)
		if err != nil || string(got) != tc.want {
			t.Errorf("removePatch(%q, %v) = %s, %v; want %s", tc.rv, tc.paths, got, err, tc.want)
		}
	}
	if _, err := removePatch("", [][]string{{"spec"}}); err == nil {
		t.Error("a patch without a resourceVersion to test was made")
	}
}
