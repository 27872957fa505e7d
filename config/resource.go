package config

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// sensitiveMark marks cty values derived from a sensitive variable.
const sensitiveMark = "sensitive"

// instanceKey identifies one instance of a repeated block.
type instanceKey struct {
	key   string    // for_each key or count index, as a string
	value cty.Value // each.key / count.index
	each  cty.Value // each.value; NilVal for count
	kind  int       // 0 single, 1 for_each, 2 count
}

// evalResource expands for_each/count and decodes every instance of a
// resource block, returning the block's value for references.
func (l *loader) evalResource(n *node, ctx *hcl.EvalContext) cty.Value {
	schema := l.idx[n.typ]
	content, diags := n.block.Body.Content(l.bodySchema(schema))
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		n.bad = true
	}
	keys, ok := l.expand(n, content, ctx)
	if ok && !l.countInstances(n, len(keys)) {
		ok = false
	}
	if !ok || n.bad {
		n.bad = true
		return cty.DynamicVal
	}
	if len(keys) == 1 && keys[0].kind == 0 {
		v, ok := l.evalInstance(n, content, ctx, keys[0])
		if !ok {
			n.bad = true
			return cty.DynamicVal
		}
		return v
	}
	if !n.used {
		// Nothing refers to the block: evaluate its instances, build no value.
		for _, k := range keys {
			if l.spentBudget() {
				return cty.DynamicVal
			}
			if _, ok := l.evalInstance(n, content, ctx, k); !ok {
				n.bad = true
			}
		}
		return cty.DynamicVal
	}
	if _, isCount := content.Attributes["count"]; isCount {
		vals := make([]cty.Value, 0, len(keys))
		for _, k := range keys {
			if l.spentBudget() {
				n.bad = true
				return cty.DynamicVal
			}
			v, ok := l.evalInstance(n, content, ctx, k)
			if !ok {
				n.bad = true
				v = cty.DynamicVal
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return cty.EmptyTupleVal
		}
		return cty.TupleVal(vals)
	}
	vals := make(map[string]cty.Value, len(keys))
	for _, k := range keys {
		if l.spentBudget() {
			n.bad = true
			return cty.DynamicVal
		}
		v, ok := l.evalInstance(n, content, ctx, k)
		if !ok {
			n.bad = true
			v = cty.DynamicVal
		}
		vals[k.key] = v
	}
	return cty.ObjectVal(vals)
}

// countInstances adds a block's instances to the configuration's total,
// reporting the block that takes it over MaxTotalInstances (once: the blocks
// after it fail without a diagnostic of their own).
func (l *loader) countInstances(n *node, count int) bool {
	total := int(l.spent.instances.Add(int64(count)))
	if total <= MaxTotalInstances {
		return true
	}
	if total-count > MaxTotalInstances {
		return false // reported at the block that went over
	}
	l.diags = append(l.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Too many instances",
		Detail:   fmt.Sprintf("With the %d instances of %s, the configuration has %d instances of blocks; the limit is %d in all (config.MaxTotalInstances).", count, n.addr, total, MaxTotalInstances),
		Subject:  n.block.DefRange.Ptr(),
	})
	return false
}

// expand evaluates for_each or count into the block's instance keys.
func (l *loader) expand(n *node, content *hcl.BodyContent, ctx *hcl.EvalContext) ([]instanceKey, bool) {
	fe, hasEach := content.Attributes["for_each"]
	cnt, hasCount := content.Attributes["count"]
	switch {
	case hasEach && hasCount:
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  `Invalid combination of "count" and "for_each"`,
			Detail:   `The "count" and "for_each" meta-arguments are mutually exclusive; only one may be used to repeat a block.`,
			Subject:  cnt.NameRange.Ptr(),
		})
		return nil, false
	case hasEach:
		return l.expandForEach(n, fe, ctx)
	case hasCount:
		return l.expandCount(cnt, ctx)
	}
	return []instanceKey{{}}, true
}

func (l *loader) expandForEach(n *node, a *hcl.Attribute, ctx *hcl.EvalContext) ([]instanceKey, bool) {
	v, diags := a.Expr.Value(ctx)
	l.diags = append(l.diags, l.hideSensitive(diags, a.Expr, ctx)...)
	if diags.HasErrors() {
		return nil, false
	}
	// The value of a local or a variable was measured once evaluated;
	// anything else is measured here.
	if !refersToValue(a.Expr) && !l.measured(v, a.Expr.Range()) || n.bad && !v.IsWhollyKnown() {
		return nil, false
	}
	if v.IsMarked() {
		l.diags = append(l.diags, sensitiveRepeat(a, "for_each", "its keys"))
		return nil, false
	}
	bad := func(detail string) ([]instanceKey, bool) {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid for_each argument",
			Detail:   detail,
			Subject:  a.Expr.Range().Ptr(),
		})
		return nil, false
	}
	if v.IsNull() || !v.IsKnown() {
		return bad("The for_each argument must be a map or a set of strings, and it must be known; it is null.")
	}
	v, _ = v.Unmark()
	ty := v.Type()
	switch {
	case ty.IsMapType() || ty.IsObjectType() || ty.IsSetType() && ty.ElementType() == cty.String:
		if v.LengthInt() > MaxInstances {
			return bad(fmt.Sprintf("for_each would make %d instances; the limit is %d per block.", v.LengthInt(), MaxInstances))
		}
		keys := make([]instanceKey, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			if ty.IsSetType() { // a set's keys are its strings
				if ev.IsNull() || !ev.IsKnown() {
					return bad("The set given to for_each contains a null or unknown string.")
				}
				k = ev
			}
			keys = append(keys, instanceKey{key: k.AsString(), value: k, each: ev, kind: 1})
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].key < keys[j].key })
		return keys, true
	case ty.IsTupleType() || ty.IsListType():
		return bad(fmt.Sprintf("The for_each argument must be a map or a set of strings; it is a %s. Convert a list of strings with toset(...).", ty.FriendlyName()))
	}
	return bad(fmt.Sprintf("The for_each argument must be a map or a set of strings; it is a %s.", ty.FriendlyName()))
}

func (l *loader) expandCount(a *hcl.Attribute, ctx *hcl.EvalContext) ([]instanceKey, bool) {
	v, diags := a.Expr.Value(ctx)
	l.diags = append(l.diags, l.hideSensitive(diags, a.Expr, ctx)...)
	if diags.HasErrors() {
		return nil, false
	}
	bad := func(detail string) ([]instanceKey, bool) {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid count argument",
			Detail:   detail,
			Subject:  a.Expr.Range().Ptr(),
		})
		return nil, false
	}
	if v.IsMarked() {
		l.diags = append(l.diags, sensitiveRepeat(a, "count", "the number of instances and their indexes"))
		return nil, false
	}
	v, err := convert.Convert(v, cty.Number)
	if err != nil || v.IsNull() || !v.IsKnown() {
		return bad("The count argument must be a known whole number.")
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() || bf.Sign() < 0 {
		return bad("The count argument must be a non-negative whole number.")
	}
	if bf.Cmp(big.NewFloat(MaxInstances)) > 0 {
		return bad(fmt.Sprintf("count is %s; the limit is %d instances per block.", bf.Text('f', -1), MaxInstances))
	}
	c, _ := bf.Int64()
	keys := make([]instanceKey, c)
	for i := range keys {
		keys[i] = instanceKey{key: fmt.Sprint(i), value: cty.NumberIntVal(int64(i)), kind: 2}
	}
	return keys, true
}

// instanceMeta builds the address, name and ranges of one instance.
func instanceMeta(n *node, k instanceKey) Meta {
	m := Meta{Type: n.typ, Label: n.name, Key: k.key, DeclRange: n.block.DefRange, Address: n.addr, Name: n.name}
	switch k.kind {
	case 1:
		m.Address = fmt.Sprintf("%s[%q]", n.addr, k.key)
		m.Name = n.name + "-" + k.key
	case 2:
		m.Address = fmt.Sprintf("%s[%s]", n.addr, k.key)
		m.Name = n.name + "-" + k.key
	}
	return m
}

// attrValues evaluates the arguments of one body against its schema,
// converting each to its declared type. Absent arguments are left out.
// ok is false when any argument failed; unknown values (from blocks that
// failed elsewhere) are left out silently.
func (l *loader) attrValues(meta *Meta, schema *BlockSchema, content *hcl.BodyContent, ctx *hcl.EvalContext, prefix string) (map[string]cty.Value, bool) {
	out := make(map[string]cty.Value, len(content.Attributes))
	ok := true
	meta.ranges.grow(rangeCount(content))
	for _, as := range schema.Attrs {
		a, present := content.Attributes[as.Name]
		if !present {
			continue
		}
		key := prefix + as.Name
		meta.setRange(l.insts, key, a.Expr.Range())
		setKeyRanges(meta, key, a.Expr, l.insts)
		v, diags := a.Expr.Value(ctx)
		l.diags = append(l.diags, l.hideSensitive(diags, a.Expr, ctx)...)
		if diags.HasErrors() {
			ok = false
			continue
		}
		if v.IsNull() {
			if as.Required {
				ok = false
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Required argument is null",
					Detail:   fmt.Sprintf("The argument %q is required, so it cannot be null.", as.Name),
					Subject:  a.Expr.Range().Ptr(),
				})
			}
			continue
		}
		if l.marked && !as.Hideable && holdsSensitive(v, as.Ref != "") {
			l.diags = append(l.diags, sensitiveArgument(schema, as.Name, a.Expr.Range()))
			ok = false
			continue
		}
		if as.Ref != "" && instanceRef(v) {
			out[as.Name] = v
			continue
		}
		known, measured, d := l.meter.measure(v, a.Expr.Range(), stored)
		if d != nil {
			l.diags = append(l.diags, d)
		}
		if !measured {
			ok = false
			continue
		}
		if !known {
			continue
		}
		if as.Ref != "" {
			out[as.Name] = v
			continue
		}
		uv, marks := v, cty.ValueMarks(nil)
		if l.marked {
			uv, marks = v.UnmarkDeep()
		}
		if len(marks) > 0 {
			if meta.Sensitive == nil {
				meta.Sensitive = map[string]bool{}
			}
			meta.Sensitive[key] = true
		}
		cv, err := convertCollection(uv, as.Type)
		if err != nil {
			ok = false
			msg, subject := convertMessage(err, as.Type, len(marks) > 0), a.Expr.Range()
			if elem, ok := convertElement(err); ok && len(marks) == 0 {
				msg = fmt.Sprintf("element %q: %s", elem, msg)
				subject = meta.KeyRange(key, elem)
			}
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Incorrect attribute value type",
				Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s.", as.Name, msg),
				Subject:  subject.Ptr(),
			})
			continue
		}
		if len(marks) > 0 {
			cv = cv.Mark(sensitiveMark)
		}
		out[as.Name] = cv
	}
	return out, ok
}

// refersToValue reports whether expr is a reference into a local or a
// variable, whose value (and so any part of it) was measured once.
func refersToValue(expr hcl.Expression) bool {
	t, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	return ok && (t.Traversal.RootName() == rootLocal || t.Traversal.RootName() == rootVar)
}

// instanceRef reports whether v is a known reference to one block instance,
// or a tuple of them. An instance's value is wholly known by construction
// (objectValue keeps only wholly known arguments), so such a reference skips
// the measure, a deep walk that allocates at every level: a model's tenant
// carries the tenant's priorities, labels and subjects. A tuple of tuples
// is not one: it is measured (it could hold a tuple twice, level after
// level).
func instanceRef(v cty.Value) bool {
	if objectRef(v) {
		return true
	}
	if v.IsMarked() || !v.IsKnown() || v.IsNull() || !v.Type().IsTupleType() {
		return false
	}
	for it := v.ElementIterator(); it.Next(); {
		if _, e := it.Element(); !objectRef(e) {
			return false
		}
	}
	return true
}

// objectRef reports whether v is a known object with a known address, as
// a reference to one block instance is.
func objectRef(v cty.Value) bool {
	if v.IsMarked() || !v.IsKnown() || v.IsNull() || !v.Type().IsObjectType() {
		return false
	}
	return v.Type().HasAttribute("address") && v.GetAttr("address").IsKnown()
}

// convertMessage words a conversion error, hiding sensitive detail.
func convertMessage(err error, want cty.Type, sensitive bool) string {
	if sensitive {
		return fmt.Sprintf("a %s is required", want.FriendlyName())
	}
	return err.Error()
}

// convertElement returns the map key or object attribute a conversion error
// is about, when it is about one.
func convertElement(err error) (string, bool) {
	var pe cty.PathError
	if !errors.As(err, &pe) || len(pe.Path) == 0 {
		return "", false
	}
	switch step := pe.Path[0].(type) {
	case cty.IndexStep:
		if step.Key.Type() == cty.String && step.Key.IsKnown() && !step.Key.IsNull() {
			return step.Key.AsString(), true
		}
	case cty.GetAttrStep:
		return step.Name, true
	}
	return "", false
}

// setKeyRanges records, for an object constructor with literal keys, the
// range of each item (key through value) under attribute attr, with names
// shared through in.
func setKeyRanges(meta *Meta, attr string, expr hcl.Expression, in *instances) {
	oc, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return
	}
	for _, it := range oc.Items {
		k, diags := it.KeyExpr.Value(nil)
		if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			continue
		}
		meta.ranges.set(in.keyName(attr, k.AsString()), hcl.RangeBetween(it.KeyExpr.Range(), it.ValueExpr.Range()))
	}
}

// rangeCount is about how many ranges attrValues and the nested blocks
// record for content: its attributes, their literal keys and one per type
// of nested block, so that they take one allocation.
func rangeCount(content *hcl.BodyContent) int {
	n := len(content.Attributes)
	for _, a := range content.Attributes {
		if oc, ok := a.Expr.(*hclsyntax.ObjectConsExpr); ok {
			n += len(oc.Items)
		}
	}
	for i, b := range content.Blocks {
		if i == 0 || b.Type != content.Blocks[i-1].Type {
			n++
		}
	}
	return n
}

// objectValue is the value an instance exposes to references: its written
// arguments, the given extra attributes, name and address.
func objectValue(meta *Meta, vals map[string]cty.Value, extra map[string]cty.Value) cty.Value {
	attrs := make(map[string]cty.Value, len(vals)+len(extra)+2)
	maps.Copy(attrs, vals)
	maps.Copy(attrs, extra)
	attrs["name"] = cty.StringVal(meta.Name)
	attrs["address"] = cty.StringVal(meta.Address)
	return cty.ObjectVal(attrs)
}

// childContext adds each.* or count.* for one instance.
func childContext(ctx *hcl.EvalContext, k instanceKey) *hcl.EvalContext {
	switch k.kind {
	case 1:
		c := ctx.NewChild()
		c.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k.value, "value": k.each})}
		return c
	case 2:
		c := ctx.NewChild()
		c.Variables = map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": k.value})}
		return c
	}
	return ctx
}
