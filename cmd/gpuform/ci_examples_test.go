package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ciDir holds the CI examples.
var ciDir = filepath.Join("..", "..", "examples", "ci")

// ciScripts returns the shell scripts of a workflow or pipeline: the run
// steps of GitHub Actions jobs, the script lines of GitLab jobs.
func ciScripts(t *testing.T, doc map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	if jobs, ok := doc["jobs"].(map[string]any); ok { // GitHub Actions
		for name, j := range jobs {
			steps, _ := j.(map[string]any)["steps"].([]any)
			for i, s := range steps {
				if run, ok := s.(map[string]any)["run"].(string); ok {
					out[name+"/"+strings.Repeat("#", i+1)] = run
				}
			}
		}
		return out
	}
	for name, j := range doc { // GitLab: every job, and hidden templates
		m, ok := j.(map[string]any)
		if !ok {
			continue
		}
		for _, key := range []string{"before_script", "script"} {
			if lines, ok := m[key].([]any); ok {
				var b strings.Builder
				for _, l := range lines {
					b.WriteString(l.(string) + "\n")
				}
				out[name+"/"+key] = b.String()
			}
		}
	}
	return out
}

var ghExpr = regexp.MustCompile(`\$\{\{[^}]*\}\}`)

// The CI examples are well-formed YAML with the parts their jobs need, and
// their shell scripts parse (bash -n).
func TestCIExamples(t *testing.T) {
	files := map[string]func(t *testing.T, doc map[string]any, text string){
		"github-actions/pr-preview.yml": func(t *testing.T, doc map[string]any, text string) {
			on := trigger(doc)
			if _, ok := on["pull_request"]; !ok {
				t.Errorf("not triggered by pull_request: %v", on)
			}
			for _, want := range []string{`plan \`, `--base "origin/$BASE_REF" --format markdown --out-dir`, "<!-- gpuform:stack=", "pull-requests: write", "fetch-depth: 0", "--method PATCH", "--method DELETE"} {
				if !strings.Contains(text, want) {
					t.Errorf("lacks %q", want)
				}
			}
			if strings.Contains(text, "run: gpuform --chdir \"$GPUFORM_DIR\" plan --base \"origin/${{") {
				t.Error("interpolates the branch name into the script")
			}
		},
		"github-actions/nightly-drift.yml": func(t *testing.T, doc map[string]any, text string) {
			on := trigger(doc)
			if _, ok := on["schedule"]; !ok {
				t.Errorf("not scheduled: %v", on)
			}
			for _, want := range []string{"drift --ref HEAD --format markdown", `title="gpuform drift: $stack"`, "gh issue create", "gh issue edit", "gh issue close", "issues: write", "<!-- gpuform:drift stack="} {
				if !strings.Contains(text, want) {
					t.Errorf("lacks %q", want)
				}
			}
		},
		"gitlab/.gitlab-ci.yml": func(t *testing.T, doc map[string]any, text string) {
			for _, job := range []string{"gpuform-plan", "gpuform-drift"} {
				j, ok := doc[job].(map[string]any)
				if !ok || j["rules"] == nil || j["script"] == nil {
					t.Errorf("no job %s with rules and script", job)
				}
			}
			for _, want := range []string{"merge_request_event", `$CI_PIPELINE_SOURCE == "schedule"`, "--out-dir", "<!-- gpuform:stack=", "drift --ref HEAD --format markdown", "gpuform drift: $stack", "state_event=close"} {
				if !strings.Contains(text, want) {
					t.Errorf("lacks %q", want)
				}
			}
		},
	}
	bash, _ := exec.LookPath("bash")
	for name, check := range files {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(ciDir, name))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.UnmarshalStrict(src, &doc); err != nil {
				t.Fatalf("not well-formed YAML: %v", err)
			}
			check(t, doc, string(src))
			scripts := ciScripts(t, doc)
			if len(scripts) == 0 {
				t.Fatal("no scripts found")
			}
			if bash == "" {
				t.Log("no bash here: scripts not parsed")
				return
			}
			for where, script := range scripts {
				cmd := exec.Command(bash, "-n")
				cmd.Stdin = strings.NewReader(ghExpr.ReplaceAllString(script, "EXPR"))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: bash -n: %v\n%s\n--- script:\n%s", where, err, out, script)
				}
			}
		})
	}
	// filepath.Glob's * matches names starting with a dot too.
	entries, _ := filepath.Glob(filepath.Join(ciDir, "*", "*.yml"))
	if len(entries) != len(files) {
		t.Errorf("examples/ci holds %d workflow files, the test checks %d: %v", len(entries), len(files), entries)
	}
}

// trigger returns a GitHub workflow's "on": YAML 1.1 reads the key on as
// true, so it may be either.
func trigger(doc map[string]any) map[string]any {
	for _, k := range []string{"on", "true"} {
		if m, ok := doc[k].(map[string]any); ok {
			return m
		}
	}
	return nil
}
