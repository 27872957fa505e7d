// Package chart tests the Helm chart charts/gpuform with Helm's Go SDK: lint
// and template for each value set of values/, the rendered objects compared
// with their goldens (examples/deploy for values/examples.yaml, rendered/<set>
// for the others), and the values the schema must refuse. A module of its own
// so that gpuform's go.mod does not carry Helm; internal/kubeapitest's
// TestChartRendersPassStrictValidation applies the goldens on the API server.
package chart

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the goldens from the chart")

const (
	chartDir    = "../../charts/gpuform"
	namespace   = "gpuform-system"
	release     = "gpuform"
	kubeVersion = "v1.37.2"
)

// valueSets are the value files of values/ and where each renders to.
var valueSets = []struct{ name, golden string }{
	{"examples", "../../examples/deploy"},
	{"defaults", "rendered/defaults"},
	{"ci", "rendered/ci"},
	{"agent-image", "rendered/agent-image"},
}

// readValues reads values/<name>.yaml.
func readValues(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("values", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatalf("values/%s.yaml: %v", name, err)
	}
	return vals
}

// caps are the capabilities of the cluster the chart is rendered for: the
// Kubernetes version of the API server harness.
func caps(t *testing.T) *common.Capabilities {
	t.Helper()
	kv, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	c := common.DefaultCapabilities.Copy()
	c.KubeVersion = *kv
	return c
}

// render templates the chart with vals as `helm template` does (schema
// validation included) and returns each template's output by its path under
// templates/, leaving out those that render no object.
func render(t *testing.T, vals map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load the chart: %v", err)
	}
	opts := common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, opts, caps(t), false)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for name, text := range out {
		rel := strings.TrimPrefix(name, ch.Name()+"/templates/")
		if !strings.HasSuffix(rel, ".yaml") || !hasObject(text) {
			continue
		}
		files[rel] = text
	}
	return files, nil
}

// hasObject says whether a rendered template holds anything but comments,
// blank lines and document separators.
func hasObject(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "---" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// header starts every golden file.
func header(set string) string {
	return fmt.Sprintf("# Rendered from charts/gpuform with testdata/chart/values/%s.yaml\n"+
		"# (release %s, namespace %s): edit the chart, then run `make chart-update`.\n", set, release, namespace)
}

func TestLint(t *testing.T) {
	kv, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range valueSets {
		t.Run(set.name, func(t *testing.T) {
			l := lint.RunAll(chartDir, readValues(t, set.name), namespace, lint.WithKubeVersion(kv))
			for _, m := range l.Messages {
				// Info is the lint's advice (an icon in Chart.yaml); a
				// warning or an error fails, as helm lint --strict does.
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %s", m)
				}
			}
		})
	}
}

func TestTemplate(t *testing.T) {
	for _, set := range valueSets {
		t.Run(set.name, func(t *testing.T) {
			files, err := render(t, readValues(t, set.name))
			if err != nil {
				t.Fatalf("template: %v", err)
			}
			checkObjects(t, files)
			if *update {
				writeGoldens(t, set.golden, set.name, files)
				return
			}
			compareGoldens(t, set.golden, set.name, files)
		})
	}
}

// writeGoldens replaces the YAML files of dir with files.
func writeGoldens(t *testing.T, dir, set string, files map[string]string) {
	t.Helper()
	old, _ := goldenFiles(dir)
	for _, rel := range old {
		if err := os.Remove(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	for rel, text := range files {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(header(set)+strings.TrimLeft(text, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// compareGoldens fails on every golden file that differs from the chart's
// rendering, is missing or is left over.
func compareGoldens(t *testing.T, dir, set string, files map[string]string) {
	t.Helper()
	have, err := goldenFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for rel := range files {
		want = append(want, rel)
	}
	sort.Strings(want)
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Errorf("%s has %v, the chart renders %v (run `make chart-update`)", dir, have, want)
	}
	for rel, text := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			continue
		}
		if got := string(b); got != header(set)+strings.TrimLeft(text, "\n") {
			t.Errorf("%s differs from the chart's rendering (run `make chart-update`):\n%s", filepath.Join(dir, rel), firstDiff(got, header(set)+strings.TrimLeft(text, "\n")))
		}
	}
}

// goldenFiles lists the YAML files under dir, relative to it, sorted.
func goldenFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	sort.Strings(out)
	return out, err
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  golden: %q\n  chart:  %q", i+1, a, b)
		}
	}
	return ""
}

// object is what checkObjects reads of a rendered object.
type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// checkObjects: every rendered document is one object, carries the chart's
// labels and never gpuform's stack label (gpuform would prune what it
// believes it owns), and namespaced objects are in the release namespace.
func checkObjects(t *testing.T, files map[string]string) {
	t.Helper()
	clusterScoped := map[string]bool{"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}
	for rel, text := range files {
		for _, doc := range strings.Split(text, "\n---\n") {
			if !hasObject(doc) {
				continue
			}
			var o object
			if err := yaml.UnmarshalStrict([]byte(stripComments(doc)), &o); err != nil {
				// UnmarshalStrict refuses the fields object does not
				// name; an object that does not parse at all fails.
				if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
					t.Errorf("%s: %v", rel, err)
					continue
				}
			}
			id := fmt.Sprintf("%s: %s %s", rel, o.Kind, o.Metadata.Name)
			switch {
			case o.Kind == "" || o.Metadata.Name == "":
				t.Errorf("%s: an object without kind or name", id)
			case o.Metadata.Labels["app.kubernetes.io/part-of"] != "gpuform":
				t.Errorf("%s: labels %v lack app.kubernetes.io/part-of=gpuform", id, o.Metadata.Labels)
			case o.Metadata.Labels["gpuform.dev/stack"] != "":
				t.Errorf("%s: carries gpuform.dev/stack, which gpuform prunes by", id)
			case clusterScoped[o.Kind] != (o.Metadata.Namespace == ""):
				t.Errorf("%s: namespace %q", id, o.Metadata.Namespace)
			case o.Metadata.Namespace != "" && o.Metadata.Namespace != namespace:
				t.Errorf("%s: namespace %q, not the release's", id, o.Metadata.Namespace)
			}
		}
	}
}

// stripComments drops whole-line comments.
func stripComments(doc string) string {
	var b bytes.Buffer
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
