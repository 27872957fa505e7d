// Package actionlint runs actionlint (github.com/rhysd/actionlint, as a
// library at the version go.mod pins) on gpuform's GitHub Actions files: the
// example workflows, those workflows with gpuform's action taken from this
// tree (so that the inputs they pass are checked against action.yml), and
// the composite action's own steps. A module of its own so that gpuform's
// go.mod does not carry actionlint.
package actionlint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v4"
)

const root = "../.."

// released matches `uses: gpuform/gpuform@<ref>`, the action at a release.
var released = regexp.MustCompile(`uses: gpuform/gpuform@[^\s]+`)

// lint runs actionlint on one workflow's content and fails on every error.
func lint(t *testing.T, path string, content []byte) {
	t.Helper()
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, content, proj)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", path, e.Line, e.Column, e.Message, e.Kind)
	}
}

// workflows returns the example workflows.
func workflows(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "examples", "ci", "github-actions", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow in examples/ci/github-actions (%v)", err)
	}
	return files
}

// TestExampleWorkflows: actionlint finds nothing in the example workflows as
// users copy them (gpuform's action at a release tag).
func TestExampleWorkflows(t *testing.T) {
	for _, f := range workflows(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !released.Match(b) {
				t.Errorf("%s does not use gpuform's action at a release", f)
			}
			lint(t, f, b)
		})
	}
}

// TestExampleWorkflowsWithThisAction: the same workflows with the action of
// this tree (uses: ./), so that actionlint checks every input they pass
// against action.yml: unknown inputs, missing required ones.
func TestExampleWorkflowsWithThisAction(t *testing.T) {
	for _, f := range workflows(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			local := released.ReplaceAll(b, []byte("uses: ./"))
			lint(t, f, local)
		})
	}
}

// actionMetadata is what actionAsWorkflow reads of action.yml.
type actionMetadata struct {
	Inputs map[string]struct {
		Required bool `yaml:"required"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []any  `yaml:"steps"`
	} `yaml:"runs"`
}

// actionAsWorkflow turns the composite action's steps into a reusable
// workflow whose inputs are the action's, which actionlint checks in full
// (expressions, contexts, step ids, action inputs); it does not lint an
// action's own steps.
func actionAsWorkflow(t *testing.T, src []byte) []byte {
	t.Helper()
	var meta actionMetadata
	if err := yaml.Unmarshal(src, &meta); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if meta.Runs.Using != "composite" || len(meta.Runs.Steps) == 0 {
		t.Fatalf("action.yml: runs.using %q with %d steps, want a composite action", meta.Runs.Using, len(meta.Runs.Steps))
	}
	inputs := map[string]any{}
	for name, in := range meta.Inputs {
		inputs[name] = map[string]any{"type": "string", "required": in.Required}
	}
	wf := map[string]any{
		"name": "action.yml as a workflow",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-latest", "steps": meta.Runs.Steps}},
	}
	b, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestActionSteps: actionlint finds nothing in action.yml's steps.
func TestActionSteps(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	lint(t, "action.yml", actionAsWorkflow(t, src))
}

// TestLintFindsErrors: the checks above can fail: a misspelt input, an
// unknown context and a step output that no step has are each reported.
func TestLintFindsErrors(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile(workflows(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"misspelt input":    released.ReplaceAll(bytes.Replace(wf, []byte("directory:"), []byte("dir:"), 1), []byte("uses: ./")),
		"unknown context":   actionAsWorkflow(t, bytes.Replace(src, []byte("${{ inputs.directory }}"), []byte("${{ input.directory }}"), 1)),
		"no such step id":   actionAsWorkflow(t, bytes.Replace(src, []byte("steps.drift.outputs.code }}\n      run"), []byte("steps.drfit.outputs.code }}\n      run"), 1)),
		"no such input var": actionAsWorkflow(t, bytes.Replace(src, []byte("${{ inputs.plan-key }}"), []byte("${{ inputs.plan_key }}"), 1)),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			if bytes.Equal(content, released.ReplaceAll(wf, []byte("uses: ./"))) || bytes.Equal(content, actionAsWorkflow(t, src)) {
				t.Fatal("the mutation changed nothing")
			}
			proj, err := actionlint.NewProject(root)
			if err != nil {
				t.Fatal(err)
			}
			l, err := actionlint.NewLinter(&bytes.Buffer{}, &actionlint.LinterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			errs, err := l.Lint(name+".yml", content, proj)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) == 0 {
				t.Error("actionlint found nothing")
			}
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, fmt.Sprintf("%d: %s", e.Line, e.Message))
			}
			t.Log(strings.Join(msgs, "\n"))
		})
	}
}
