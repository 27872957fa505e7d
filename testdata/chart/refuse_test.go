package chart

import (
	"strings"
	"testing"
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
