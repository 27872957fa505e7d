package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// A created PrometheusRule is most of a plan when alerts are on (a few
// dozen lines per rule: expression, annotations, labels), and its rules
// are gpuform's own, whose text docs/observability.md gives. The text plan
// therefore prints one line per rule group, naming its alerts with their
// severity and wait; TextOptions.Detail (plan --detail) prints every
// field, and the JSON plan always has them all.

// isRuleKind reports whether gvk is the Prometheus Operator's PrometheusRule.
func isRuleKind(gvk schema.GroupVersionKind) bool {
	return gvk.Group == engine.KindPrometheusRule.Group && gvk.Kind == engine.KindPrometheusRule.Kind
}

// ruleGroups writes the summary of a created PrometheusRule's spec.groups.
func (r *textRenderer) ruleGroups(groups any) {
	list, _ := groups.([]any)
	for _, g := range list {
		gm, _ := g.(map[string]any)
		rules, _ := gm["rules"].([]any)
		alerts := make([]string, 0, len(rules))
		for _, rule := range rules {
			rm, _ := rule.(map[string]any)
			alerts = append(alerts, alertSummary(rm))
		}
		textsafe.Fprintf(r.w, "      %s spec.groups[%s]: %d %s: %s\n", r.symbol("+"), gm["name"], len(rules), PluralWord(len(rules), "alert", "alerts"), strings.Join(alerts, ", "))
	}
	textsafe.Fprintf(r.w, "      %s\n", r.paint("2", "# each rule's expression, annotations and labels: plan --detail, or -o json"))
}

// alertSummary is one rule's name with its severity and wait, e.g.
// "GPUUtilizationLow (warning, for 15m)".
func alertSummary(rule map[string]any) string {
	name, _ := rule["alert"].(string)
	if name == "" {
		name, _ = rule["record"].(string)
	}
	var attrs []string
	if labels, ok := rule["labels"].(map[string]any); ok {
		if sev, ok := labels["severity"].(string); ok {
			attrs = append(attrs, sev)
		}
	}
	if d, ok := rule["for"].(string); ok && d != "" {
		attrs = append(attrs, "for "+d)
	}
	if len(attrs) == 0 {
		return name
	}
	return fmt.Sprintf("%s (%s)", name, strings.Join(attrs, ", "))
}
