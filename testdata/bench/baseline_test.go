package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuform/gpuform/testdata/gen/gen"
)

// containsAll fails t for each of wants that got, the table named what,
// lacks.
func containsAll(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, got)
		}
	}
}

// ms is a sample of the given milliseconds.
func ms(v ...int) sample {
	var out sample
	for _, x := range v {
		out = append(out, time.Duration(x)*time.Millisecond)
	}
	return out
}

// sizeM is a result of size M as a run might measure it.
func sizeM() *sizeResult {
	return &sizeResult{size: gen.Size{Name: "M", Nodes: 500}, objects: 10516, changed: 1100,
		applyG: ms(37600, 36000, 39000), applyK: ms(83400),
		planNoop: ms(1950, 1800, 2430), planChanged: ms(2500, 2400, 2600),
		load: ms(880, 870, 900), list: ms(570, 560, 590), diffK: ms(144000),
		planRSS: 267 << 20, planNoopRSS: 250 << 20, applyRSS: 218 << 20, planReqs: 40, applyReqs: 10600,
		changedReqs: 40, listReqs: 38, planLists: 20, applyWrites: 10520}
}

// Without a baseline the tables are those the bench wrote before -baseline
// existed, byte for byte (docs/performance.md is generated from them), and
// a result carrying a baseline does not change them either.
func TestTableUnchanged(t *testing.T) {
	want := "\n#### Plan (seconds: median, min–max)\n\n| size | objects | nodes | gpuform plan, no-op | gpuform plan, 10% tenants changed | config load | raw LISTs | floor (load + LISTs) | plan / floor | kubectl diff --server-side | kubectl diff / plan | plan requests | plan peak RSS |\n|---|---:|---:|---|---|---|---|---|---:|---|---:|---:|---:|\n| M | 10516 | 500 | 1.95 (1.80–2.43) | 2.50 (2.40–2.60) (1100 changes) | 0.88 (0.87–0.90) | 0.57 (0.56–0.59) (38 requests) | 1.45 | 1.34x | 144 (1 run) | 73.8x | 40 | 267 MB |\n\n#### Apply from empty (seconds: median, min–max)\n\n| size | objects | gpuform apply | kubectl apply --server-side --validate=false | gpuform objects/s | kubectl objects/s | throughput gpuform / kubectl | apply requests (writes) | apply peak RSS |\n|---|---:|---|---|---:|---:|---:|---:|---:|\n| M | 10516 | 37.6 (36.0–39.0) | 83.4 (1 run) | 280 | 126 | 2.2x | 10600 (10520) | 218 MB |\n\n#### Scaling\n\n| size | objects | plan no-op | plan ms per 1,000 objects | plan requests | raw LIST requests |\n|---|---:|---|---:|---:|---:|\n| M | 10516 | 1.95 | 185 | 40 | 38 |\n"
	if got := table([]*sizeResult{sizeM()}); got != want {
		t.Errorf("table changed:\n got %q\nwant %q", got, want)
	}
	r := sizeM()
	r.base = &baselineResult{applyG: ms(40000), planNoop: ms(2100)}
	if got := table([]*sizeResult{r}); got != want {
		t.Errorf("table with a baseline result changed:\n got %q\nwant %q", got, want)
	}
}

// The baseline table gives, per size, this tree's and the baseline's
// medians of the no-op plan and the apply from empty, and their ratio; a
// baseline plan that was not a no-op says so; sizes measured without a
// baseline have no rows.
func TestBaselineTable(t *testing.T) {
	m := sizeM()
	m.base = &baselineResult{applyG: ms(40000, 38000, 42000), planNoop: ms(2000, 2100, 1900),
		applyRSS: 230 << 20, planRSS: 260 << 20, applyReqs: 10601, planReqs: 41}
	s := sizeM()
	s.size.Name, s.objects = "S", 1066
	s.base = &baselineResult{applyG: ms(4000), planNoop: ms(400), planChanges: 7}
	l := sizeM()
	l.size.Name, l.base = "L", nil
	got := baselineTable([]*sizeResult{m, s, l}, &baseline{ref: "main~5", commit: "abc1234"})
	containsAll(t, "baseline table", got,
		"\n#### This tree against the baseline `main~5` (abc1234) (seconds: median, min–max)\n",
		"| size | objects | measurement | this tree | baseline | this tree / baseline | requests (this tree / baseline) | peak RSS (this tree / baseline) |\n|---|---:|---|---|---|---:|---:|---:|\n",
		"| M | 10516 | plan, no-op | 1.95 (1.80–2.43) | 2.00 (1.90–2.10) | 0.97x | 40 / 41 | 250 MB / 260 MB |\n",
		"| M | 10516 | apply from empty | 37.6 (36.0–39.0) | 40.0 (38.0–42.0) | 0.94x | 10600 / 10601 | 218 MB / 230 MB |\n",
		"| S | 1066 | plan, no-op | 1.95 (1.80–2.43) | 0.40 (1 run) (not a no-op: 7 changes) | 4.88x |",
		"| S | 1066 | apply from empty | 37.6 (36.0–39.0) | 4.00 (1 run) | 9.40x |",
	)
	if strings.Contains(got, "| L |") {
		t.Errorf("baseline table has a row for L, measured without a baseline:\n%s", got)
	}
	if n := strings.Count(got, "\n| "); n != 1+4 {
		t.Errorf("baseline table has %d rows with its header, want 5:\n%s", n, got)
	}
}

// buildBaseline builds ./cmd/gpuform of the commit the ref names: not the
// working tree (uncommitted changes are left out), not another commit; it
// leaves the work directory holding the binary alone and the repository
// without a new worktree; an unknown ref is an error naming it.
func TestBuildBaseline(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not found (the bench builds its baseline with git):", err)
	}
	repo := t.TempDir()
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com",
			"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	writeMain := func(says string) {
		t.Helper()
		src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"" + says + "\") }\n"
		if err := os.MkdirAll(filepath.Join(repo, "cmd", "gpuform"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "cmd", "gpuform", "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/fake\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("init", "-q")
	writeMain("first")
	gitIn("add", ".")
	gitIn("commit", "-q", "-m", "first")
	first := gitIn("rev-parse", "HEAD")
	writeMain("second")
	gitIn("commit", "-q", "-am", "second")
	writeMain("uncommitted")

	for _, tc := range []struct{ ref, says string }{
		{"HEAD~1", "first"},
		{"main", "second"},
	} {
		work := t.TempDir()
		bl, err := buildBaseline(t.Context(), repo, work, tc.ref)
		if err != nil {
			t.Fatalf("buildBaseline(%s): %v", tc.ref, err)
		}
		out, err := exec.Command(bl.bin).Output()
		if err != nil {
			t.Fatalf("run the baseline of %s: %v", tc.ref, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.says {
			t.Errorf("the baseline of %s says %q, want %q", tc.ref, got, tc.says)
		}
		if bl.ref != tc.ref || bl.commit == "" || bl.commit == bl.ref {
			t.Errorf("baseline of %s: ref %q, commit %q", tc.ref, bl.ref, bl.commit)
		}
		if tc.ref == "HEAD~1" && !strings.HasPrefix(first, bl.commit) {
			t.Errorf("baseline of HEAD~1 is commit %q, want a prefix of %s", bl.commit, first)
		}
		entries, err := os.ReadDir(work)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "gpuform-baseline" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("work holds %q after the build, want only gpuform-baseline", names)
		}
	}
	if wt := gitIn("worktree", "list"); strings.Count(wt, "\n") != 0 {
		t.Errorf("the build left worktrees:\n%s", wt)
	}
	if _, err := buildBaseline(t.Context(), repo, t.TempDir(), "no-such-ref"); err == nil || !strings.Contains(err.Error(), "no-such-ref") {
		t.Errorf("buildBaseline(no-such-ref) = %v, want an error naming the ref", err)
	}
}
