package compile_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/compile"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/kinds"
)

// On a cluster without the Prometheus Operator, the quickstart's alerts
// still compile (render writes them) and plan says which blocks need the
// PrometheusRule kind and what to install.
func TestAlertsWithoutThePrometheusOperator(t *testing.T) {
	d, err := compile.Compile(enginetest.LoadExample(t, "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, o := range d.Objects {
		if o.Object.GetKind() == "PrometheusRule" {
			rules = append(rules, o.Address+" "+o.Object.GetNamespace()+"/"+o.Object.GetName())
		}
	}
	want := "pool.a100 monitoring/gpuform-quickstart-pool-a100,tenant.serving monitoring/gpuform-quickstart-tenant-serving"
	if got := strings.Join(rules, ","); got != want {
		t.Errorf("PrometheusRules %s; want %s", got, want)
	}
	e, ok := kinds.Builtin().Lookup(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PrometheusRule"})
	if !ok {
		t.Fatal("the registry has no PrometheusRule")
	}
	_, err = engine.Diff(d, &engine.Live{MissingKinds: []engine.Kind{e.Kind}}, engine.DiffOptions{})
	var mk *engine.MissingKindError
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "pool.a100 needs PrometheusRule (monitoring.coreos.com/v1), which this cluster does not serve: install the Prometheus Operator") {
		t.Errorf("diff without the CRD: %v", err)
	}
}
