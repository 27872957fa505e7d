package chart

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
)

// TestSchemaRefuses: values that would deploy something unsafe or broken are
// refused before anything renders (helm install and helm template run the
// same schema validation), with a message naming the value.
func TestSchemaRefuses(t *testing.T) {
	tests := []struct {
		name string
		vals map[string]any
		want string
	}{
		{"the agent without its image", map[string]any{}, "/agent/image/repository"},
		{"the agent with an empty image", map[string]any{"agent": map[string]any{"image": map[string]any{"repository": ""}}}, "/agent/image/repository"},
		{"drift without a repository", map[string]any{"drift": map[string]any{"enabled": true}}, "repository"},
		{"a misspelt key", map[string]any{"agent": map[string]any{"runtimeclass": "nvidia"}}, "runtimeclass"},
		{"the agent on every node", map[string]any{"agent": map[string]any{"nodeSelector": nil}}, "nodeSelector"},
		{"no runtime class", map[string]any{"agent": map[string]any{"runtimeClassName": ""}}, "runtimeClassName"},
		{"drift without a memory limit", map[string]any{"drift": map[string]any{"enabled": true, "repository": "https://example.com/r.git", "resources": map[string]any{"limits": map[string]any{"memory": nil}}}}, "memory"},
		{"a digest that is not one", map[string]any{"image": map[string]any{"digest": "latest"}}, "digest"},
		{"a relative textfile directory", map[string]any{"drift": map[string]any{"metrics": map[string]any{"textfileDirectory": "metrics"}}}, "textfileDirectory"},
		{"a binding to no one", map[string]any{"rbac": map[string]any{"applySubjects": []any{map[string]any{"kind": "ServiceAccount"}}}}, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, tt.vals)
			if err == nil {
				t.Fatalf("rendered; want an error naming %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}

// TestAgentImageRequiredWithoutSchema: with the schema skipped (helm
// --skip-schema-validation), the agent without its image still renders
// nothing, and the message says where the image comes from.
func TestAgentImageRequiredWithoutSchema(t *testing.T) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	opts := common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(ch, map[string]any{}, opts, caps(t), true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Render(ch, top)
	if err == nil || !strings.Contains(err.Error(), "agent.image.repository") || !strings.Contains(err.Error(), "build/agent.Dockerfile") {
		t.Errorf("render without the agent's image: %v; want a message naming agent.image.repository and build/agent.Dockerfile", err)
	}
}
