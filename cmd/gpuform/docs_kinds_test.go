package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuform/gpuform/engine"
)

// TestDocsManagedKindsTable: docs/plan.md's table of the managed kinds a
// plan lists is the registry's, in its order, with each kind's API and
// scope; its numbered table of what a plan reads names a LIST of each read
// kind.
func TestDocsManagedKindsTable(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "docs", "plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	start := strings.Index(doc, "| kind | API | scope |")
	if start < 0 {
		t.Fatal("docs/plan.md has no table of the managed kinds (| kind | API | scope |)")
	}
	var got []string
	for _, line := range strings.Split(doc[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		got = append(got, strings.TrimSpace(cells[0])+" "+strings.Trim(strings.TrimSpace(cells[1]), "`"))
	}
	var want []string
	for _, k := range engine.ManagedKinds() {
		want = append(want, k.Kind+" "+k.GroupVersion().String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("docs/plan.md's managed kinds:\n%s\nthe registry's, in apply order:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	reads := doc[:start]
	for _, k := range engine.ReadKinds() {
		if !strings.Contains(reads, k.Kind.Kind) {
			t.Errorf("docs/plan.md's table of what a plan reads does not name the LIST of %s", k.Kind.Kind)
		}
	}
}
