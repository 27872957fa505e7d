package main

import (
	"bytes"
	"fmt"
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
	if runs, ok := doc["runs"].(map[string]any); ok { // a composite action
		steps, _ := runs["steps"].([]any)
		for i, s := range steps {
			if run, ok := s.(map[string]any)["run"].(string); ok {
				out["runs/"+strings.Repeat("#", i+1)] = run
			}
		}
		return out
	}
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

// ciFiles are gpuform's CI integrations (the composite action at the
// repository root, the GitLab CI template) and the examples that use them.
var ciFiles = map[string]func(t *testing.T, doc map[string]any, text string){
	"action.yml": func(t *testing.T, doc map[string]any, text string) {
		for _, want := range []string{
			// preview
			`--base "origin/$BASE_REF" --format markdown --out-dir`, "<!-- gpuform:stack=", "--method PATCH", "--method DELETE",
			// plan and apply on merge: signed, bound to the branch, the same file
			"GPUFORM_PLAN_KEY: ${{ inputs.plan-key }}", "GPUFORM_REF: ${{ github.ref_name }}", "plan --detailed-exitcode",
			`--out "$RUNNER_TEMP/gpuform-plan/gpuform.plan"`, `apply "$RUNNER_TEMP/gpuform-plan/gpuform.plan"`,
			"actions/upload-artifact@v4", "actions/download-artifact@v4",
			// drift
			"drift --ref HEAD --format markdown", `title="gpuform drift: $stack"`, "gh issue create", "gh issue edit", "gh issue close", "<!-- gpuform:drift stack=",
			// fails closed on a missing secret, installs the action's own version
			"input kubeconfig is empty", "needs input plan-key", "inputs.version || github.action_ref",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("lacks %q", want)
			}
		}
		if runs, _ := doc["runs"].(map[string]any); runs["using"] != "composite" {
			t.Errorf("runs.using = %v, want composite", runs["using"])
		}
		if strings.Contains(text, "origin/${{") {
			t.Error("interpolates the branch name into a script")
		}
	},
	"ci/gitlab/gpuform.yml": func(t *testing.T, doc map[string]any, text string) {
		for _, job := range []string{"gpuform-preview", "gpuform-plan", "gpuform-apply", "gpuform-drift"} {
			j, ok := doc[job].(map[string]any)
			if !ok || j["rules"] == nil || j["script"] == nil {
				t.Errorf("no job %s with rules and script", job)
			}
		}
		for _, want := range []string{
			"merge_request_event", `$CI_PIPELINE_SOURCE == "schedule"`, "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH",
			"--out-dir", "<!-- gpuform:stack=", "drift --ref HEAD --format markdown", "gpuform drift: $stack", "state_event=close",
			`--out "$CI_PROJECT_DIR/gpuform.plan"`, `apply "$CI_PROJECT_DIR/gpuform.plan"`, "GPUFORM_REF: $CI_COMMIT_BRANCH",
			"need GPUFORM_APPLY_KUBECONFIG GPUFORM_PLAN_KEY", "needs: [gpuform-plan]", "$[[ inputs.directory ]]", "$[[ inputs.version ]]",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("lacks %q", want)
			}
		}
	},
	"examples/ci/github-actions/gpuform.yml": func(t *testing.T, doc map[string]any, text string) {
		on := trigger(doc)
		for _, ev := range []string{"pull_request", "push", "schedule"} {
			if _, ok := on[ev]; !ok {
				t.Errorf("not triggered by %s: %v", ev, on)
			}
		}
		jobs, _ := doc["jobs"].(map[string]any)
		for _, job := range []string{"preview", "plan", "apply", "drift"} {
			if !strings.Contains(fmt.Sprint(jobs[job]), "command:"+job) {
				t.Errorf("job %s does not run the action's command %s", job, job)
			}
		}
		if apply, _ := jobs["apply"].(map[string]any); apply["needs"] != "plan" || apply["environment"] == nil {
			t.Errorf("apply: needs %v, environment %v; want the plan job's plan, in a protected environment", apply["needs"], apply["environment"])
		}
		if n := strings.Count(text, "GPUFORM_DIR: "); n != 1 {
			t.Errorf("sets the configuration directory %d times, want once", n)
		}
		if n := len(regexp.MustCompile(`uses: gpuform/gpuform@v[0-9]+\.[0-9]+\.[0-9]+\n`).FindAllString(text, -1)); n != 4 {
			t.Errorf("%d steps use gpuform's action pinned at a release, want 4", n)
		}
	},
	"examples/ci/gitlab/.gitlab-ci.yml": func(t *testing.T, doc map[string]any, text string) {
		inc, _ := doc["include"].([]any)
		if len(inc) != 1 {
			t.Fatalf("include = %v, want gpuform's template", doc["include"])
		}
		m, _ := inc[0].(map[string]any)
		remote, _ := m["remote"].(string)
		tag := regexp.MustCompile(`/gpuform/gpuform/(v[0-9]+\.[0-9]+\.[0-9]+)/ci/gitlab/gpuform\.yml$`).FindStringSubmatch(remote)
		inputs, _ := m["inputs"].(map[string]any)
		if tag == nil || inputs["version"] != tag[1] || inputs["directory"] == nil {
			t.Errorf("includes %q with inputs %v: want the template at a release tag, that version, and the directory", remote, inputs)
		}
	},
}

// The CI integrations and examples are well-formed YAML with the parts their
// jobs need, and their shell scripts parse (bash -n).
func TestCIExamples(t *testing.T) {
	bash, _ := exec.LookPath("bash")
	for name, check := range ciFiles {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("..", "..", name))
			if err != nil {
				t.Fatal(err)
			}
			// A GitLab template's spec is a YAML document of its own.
			body := src
			if i := bytes.Index(src, []byte("\n---\n")); i >= 0 {
				body = src[i+5:]
			}
			var doc map[string]any
			if err := yaml.UnmarshalStrict(body, &doc); err != nil {
				t.Fatalf("not well-formed YAML: %v", err)
			}
			check(t, doc, string(src))
			scripts := ciScripts(t, doc)
			if strings.HasPrefix(name, "examples/") {
				if len(scripts) != 0 {
					t.Errorf("an example has scripts of its own; the job logic belongs in action.yml or ci/gitlab/gpuform.yml: %v", scripts)
				}
				return
			}
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
	if len(entries) != 2 {
		t.Errorf("examples/ci holds %d workflow files, the test checks 2: %v", len(entries), entries)
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
