package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// SummarySensitiveHere is the summary of the diagnostic for a value derived
// from a sensitive variable where gpuform would show it in clear.
const SummarySensitiveHere = "Sensitive value not allowed here"

// holdsSensitive reports whether v derives from a sensitive variable. A
// reference (ref) counts only when the choice of the instance does (a
// condition over a sensitive value): the instance it names may well hold
// sensitive values in its own hideable arguments.
func holdsSensitive(v cty.Value, ref bool) bool {
	if !ref {
		return v.ContainsMarked()
	}
	if v.IsMarked() {
		return true
	}
	if ty := v.Type(); v.IsKnown() && !v.IsNull() && (ty.IsTupleType() || ty.IsListType() || ty.IsSetType()) {
		for it := v.ElementIterator(); it.Next(); {
			if _, e := it.Element(); e.IsMarked() {
				return true
			}
		}
	}
	return false
}

// sensitiveArgument is the error for argument name of a block (schema) whose value derives from a sensitive variable but is not
// hideable. It names the arguments that may take one; it never shows the
// value.
func sensitiveArgument(schema *BlockSchema, name string, rng hcl.Range) *hcl.Diagnostic {
	var ok []string
	for _, a := range schema.Attrs {
		if a.Hideable {
			ok = append(ok, a.Name)
		}
	}
	where := fmt.Sprintf("No argument of a %s block may take one.", schema.Type)
	if len(ok) > 0 {
		where = fmt.Sprintf("In a %s block only %s may take one.", schema.Type, strings.Join(ok, ", "))
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  SummarySensitiveHere,
		Detail: fmt.Sprintf("The value of %q derives from a sensitive variable, but gpuform cannot hide this argument: "+
			"it becomes a Kubernetes name, namespace, label or annotation, a node setting, part of an object shared by the stack, "+
			"or a figure of the capacity table, all printed and stored in clear. %s The value is not shown.", name, where),
		Subject: rng.Ptr(),
	}
}

// sensitiveRepeat is the error for a for_each or count argument (meta)
// whose value derives from a sensitive variable: what shows (the keys, or
// the count) would become instance addresses and Kubernetes names.
func sensitiveRepeat(a *hcl.Attribute, meta, what string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  SummarySensitiveHere,
		Detail: fmt.Sprintf("The %s argument derives from a sensitive variable, but %s would become instance addresses and Kubernetes names, "+
			"printed in every plan and written to the cluster in clear (annotation gpuform.dev/address). Repeat the block over a value that is not sensitive "+
			"and use the sensitive variable inside it, in an argument gpuform hides. The value is not shown.", meta, what),
		Subject: a.Expr.Range().Ptr(),
	}
}
