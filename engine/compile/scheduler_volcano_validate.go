package compile

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine/capacity"
)

// The range of a Volcano Queue's spec.weight: minimum 1, maximum 65535
// (Volcano v1.15.1, config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml,
// from the markers +kubebuilder:validation:Minimum=1 and Maximum=65535 of
// QueueSpec.Weight in staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go).
const (
	volcanoMinWeight = 1
	volcanoMaxWeight = 65535
)

// Validate reports what Volcano's Queue CRD would refuse: a tenant weight
// outside the Queue's range; and what its Queue webhook would refuse of
// the organisation tree's Queues, or Volcano could not express
// (volcanoDepartments).
func (*volcano) Validate(cfg *config.Config, quotas *capacity.Quotas) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range cfg.Tenants {
		if t.Weight < volcanoMinWeight || t.Weight > volcanoMaxWeight {
			diags = append(diags, errorAt(t.Range("weight"), "Volcano weight out of range",
				"weight is %d, and a Volcano Queue's weight must be between %d and %d: the API server refuses the Queue.",
				t.Weight, volcanoMinWeight, volcanoMaxWeight))
		}
	}
	return append(diags, volcanoDepartments(cfg, quotas)...)
}
