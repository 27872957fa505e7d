package engine_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuform/gpuform/config"
	"github.com/gpuform/gpuform/engine"
)

// notInDiff are the parts of the schema the config diff shows through
// something else, with the reason; everything else must show as itself.
var notInDiff = map[string]string{
	"locals":              "locals show in the attributes of the blocks that use them",
	"variable.nullable":   "a check on the value: a value it refuses fails the load",
	"variable.validation": "checks on the value: a value they refuse fails the load",
}

// shownAs maps attributes to the path the config diff shows them under.
var shownAs = map[string]string{
	"variable.type":    "value", // the final value, converted to the type
	"variable.default": "value",
}

// samples are two valid values for the attributes whose type alone does
// not give them (enumerations, constraints, type expressions).
var samples = map[string][2]string{
	"gpuform.scheduler":     {`"kueue"`, `"volcano"`},
	"gpuform.mig_backend":   {`"gpu-operator"`, `"agent"`},
	"variable.type":         {`number`, `string`},
	"variable.default":      {`1`, `2`},
	"priority.preemption":   {`"Never"`, `"PreemptLowerPriority"`},
	"pool.driver_version":   {`">= 535"`, `">= 550"`},
	"pool.currency":         {`"USD"`, `"EUR"`},
	"pool.mode":             {`"device_plugin"`, `"dra"`},
	"model.deployment_mode": {`"Standard"`, `"Knative"`},
	"pool.taint.effect":     {`"NoSchedule"`, `"NoExecute"`},
	"tenant.runtime_class":  {`"gvisor"`, `["kata", "gvisor"]`},
	// A fleet's, loaded for member a (configdiff_fleet_test.go).
	"cluster.values":          {`{ x = 1 }`, `{ x = 2 }`},
	"cluster.role":            {`"manager"`, `null`},
	"pool.clusters":           {`["a"]`, `["a", "b"]`},
	"tenant.clusters":         {`["a"]`, `["a", "b"]`},
	"model.clusters":          {`["a"]`, `["a", "b"]`},
	"pool.cluster_selector":   {`{ k = "a" }`, `{ z = "a" }`},
	"tenant.cluster_selector": {`{ k = "a" }`, `{ z = "a" }`},
	"model.cluster_selector":  {`{ k = "a" }`, `{ z = "a" }`},
	"tenant.dispatch":         {`"multikueue"`, `null`},
}

// needs are the lines a valid block needs besides its required attributes,
// left out when the attribute under test is (or is in) one of unless.
var needs = map[string]struct {
	line   string
	unless []string
}{
	"mig_layout": {`slices = { "1g.10gb" = 1 }`, []string{"slices", "device"}}, // slices or device blocks
	"variable":   {`default = 1`, []string{"default"}},                         // a value
}

// sample returns two different HCL values for attribute a (path names it:
// tenant.quota.gpus).
func sample(path string, a config.AttrSchema) ([2]string, bool) {
	if s, ok := samples[path]; ok {
		return s, true
	}
	switch {
	case a.RefList:
		return [2]string{"[" + a.Ref + ".a]", "[" + a.Ref + ".b]"}, true
	case a.Ref != "":
		return [2]string{a.Ref + ".a", a.Ref + ".b"}, true
	}
	x, okx := typedValue(a.Type, false)
	y, oky := typedValue(a.Type, true)
	return [2]string{x, y}, okx && oky
}

// typedValue is a value of type t, the first or second of two different ones.
func typedValue(t cty.Type, second bool) (string, bool) {
	pick := func(a, b string) (string, bool) {
		if second {
			return b, true
		}
		return a, true
	}
	switch {
	case t == cty.String:
		return pick(`"a"`, `"b"`)
	case t == cty.Number:
		return pick("1", "2")
	case t == cty.Bool:
		return pick("true", "false")
	case t.IsListType():
		v, ok := typedValue(t.ElementType(), second)
		return "[" + v + "]", ok
	case t.IsMapType():
		v, ok := typedValue(t.ElementType(), second)
		return `{ "k" = ` + v + " }", ok
	case t.IsObjectType():
		var names, parts []string
		for n := range t.AttributeTypes() {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v, ok := typedValue(t.AttributeType(n), second)
			if !ok {
				return "", false
			}
			parts = append(parts, n+" = "+v)
		}
		return "{ " + strings.Join(parts, ", ") + " }", true
	}
	return "", false
}

// attrCase is one attribute of the schema under test.
type attrCase struct {
	top    config.BlockSchema
	nested []config.BlockSchema // the nested blocks on the way to attr
	attr   config.AttrSchema
}

// path names the attribute: tenant.quota.gpus.
func (c attrCase) path() string {
	parts := []string{c.top.Type}
	for _, n := range c.nested {
		parts = append(parts, n.Type)
	}
	return strings.Join(append(parts, c.attr.Name), ".")
}

// shownPath is the path ConfigDiff shows the attribute under:
// quota["a"].gpus.
func (c attrCase) shownPath() string {
	var b strings.Builder
	for _, n := range c.nested {
		b.WriteString(n.Type)
		switch {
		case len(n.Labels) > 0:
			b.WriteString(`["a"]`)
		case n.Many:
			b.WriteString("[0]")
		}
		b.WriteString(".")
	}
	if s, ok := shownAs[c.path()]; ok {
		return b.String() + s
	}
	return b.String() + c.attr.Name
}

// cases lists the attributes of b and its nested blocks, less notInDiff.
func cases(top config.BlockSchema, nested []config.BlockSchema, b config.BlockSchema) []attrCase {
	var out []attrCase
	for _, a := range b.Attrs {
		c := attrCase{top: top, nested: nested, attr: a}
		if _, skip := notInDiff[c.path()]; !skip {
			out = append(out, c)
		}
	}
	for _, nb := range b.Blocks {
		inner := append(append([]config.BlockSchema(nil), nested...), nb)
		if _, skip := notInDiff[attrCase{top: top, nested: inner[:len(inner)-1], attr: config.AttrSchema{Name: nb.Type}}.path()]; !skip {
			out = append(out, cases(top, inner, nb)...)
		}
	}
	return out
}

// blockText writes block b (named by label, "" for none) with its required
// attributes and, when c is set, the attribute under test with value v;
// depth is how far into c.nested b is.
func blockText(w *strings.Builder, b config.BlockSchema, label string, c *attrCase, depth int, v string) error {
	path := b.Type
	if c != nil {
		path = c.top.Type
		for _, n := range c.nested[:depth] {
			path += "." + n.Type
		}
	}
	fmt.Fprintf(w, "%s ", b.Type)
	if len(b.Labels) > 0 {
		fmt.Fprintf(w, "%q ", label)
	}
	w.WriteString("{\n")
	testedHere := c != nil && depth == len(c.nested)
	for _, a := range b.Attrs {
		switch {
		case testedHere && a.Name == c.attr.Name:
			fmt.Fprintf(w, "  %s = %s\n", a.Name, v)
		case a.Required:
			s, ok := sample(path+"."+a.Name, a)
			if !ok {
				return fmt.Errorf("no sample values for %s.%s: add them to samples", path, a.Name)
			}
			fmt.Fprintf(w, "  %s = %s\n", a.Name, s[0])
		}
	}
	if n, ok := needs[path]; ok && (c == nil || !contains(n.unless, testedUnder(c, depth))) {
		fmt.Fprintf(w, "  %s\n", n.line)
	}
	if c != nil && depth < len(c.nested) {
		if err := blockText(w, c.nested[depth], "a", c, depth+1, v); err != nil {
			return err
		}
	}
	w.WriteString("}\n")
	return nil
}

// testedUnder is the name, at depth, of the attribute or nested block the
// attribute under test is or is in.
func testedUnder(c *attrCase, depth int) string {
	if depth < len(c.nested) {
		return c.nested[depth].Type
	}
	return c.attr.Name
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// caseConfig is a configuration with two instances (a, b) of every block
// type a reference can name, a gpuform block and c's block, named
// "subject", with the attribute under test set to v.
func caseConfig(schema []config.BlockSchema, c attrCase, v string) (string, error) {
	targets := map[string]bool{}
	var walk func(b config.BlockSchema)
	walk = func(b config.BlockSchema) {
		for _, a := range b.Attrs {
			if a.Ref != "" {
				targets[a.Ref] = true
			}
		}
		for _, nb := range b.Blocks {
			walk(nb)
		}
	}
	for _, b := range schema {
		walk(b)
	}
	var w strings.Builder
	for _, b := range schema {
		var err error
		switch {
		case b.Type == c.top.Type:
			err = blockText(&w, b, "subject", &c, 0, v)
			if targets[b.Type] && err == nil {
				// A block type that refers to its own kind (a department's
				// parent): the targets a and b beside the subject.
				if err = blockText(&w, b, "a", nil, 0, ""); err == nil {
					err = blockText(&w, b, "b", nil, 0, "")
				}
			}
		case b.Type == config.TypeGpuform:
			err = blockText(&w, b, "", nil, 0, "")
		case targets[b.Type]:
			if err = blockText(&w, b, "a", nil, 0, ""); err == nil {
				err = blockText(&w, b, "b", nil, 0, "")
			}
		}
		if err != nil {
			return "", err
		}
	}
	return w.String(), nil
}

// TestConfigDiffCoversSchema fails when an attribute of the schema (nested
// blocks' included) does not show in the config diff: for each, it loads
// two configurations that differ only in that attribute and wants ConfigDiff
// to report that block changed at that attribute. A new attribute
// is covered without editing this test unless its type gives no sample
// value (add it to samples) or the diff shows it as something else (add it
// to shownAs or, with the reason, to notInDiff).
func TestConfigDiffCoversSchema(t *testing.T) {
	schema := config.Schema()
	covered := map[string]int{}
	for _, b := range schema {
		for _, c := range cases(b, nil, b) {
			t.Run(c.path(), func(t *testing.T) {
				s, ok := sample(c.path(), c.attr)
				if !ok {
					t.Fatalf("no sample values for %s (%s): add them to samples", c.path(), c.attr.Type.FriendlyName())
				}
				var cfgs [2]*config.Config
				for i, v := range s {
					src, err := caseConfig(schema, c, v)
					if err != nil {
						t.Fatal(err)
					}
					src, opts := asFleet(c, src)
					cfg, diags := config.LoadSources(map[string][]byte{"main.hcl": []byte(src)}, opts)
					if diags.HasErrors() {
						t.Fatalf("load with %s = %s: %s\n%s", c.path(), v, diags.Error(), src)
					}
					cfgs[i] = cfg
				}
				changes := engine.ConfigDiff(cfgs[0], cfgs[1])
				want := c.shownPath()
				for _, ch := range changes {
					if ch.Type != c.top.Type || ch.Action != engine.ActionUpdate || (len(c.top.Labels) > 0 && !strings.HasSuffix(ch.Address, ".subject")) {
						continue // another block whose defaults derive from the attribute
					}
					for _, f := range ch.Attributes {
						if f.Path == want || strings.HasPrefix(f.Path, want+"[") || strings.HasPrefix(f.Path, want+".") {
							covered[c.top.Type]++
							return
						}
					}
				}
				t.Errorf("%s = %s -> %s: ConfigDiff reports\n%s\nwant the subject %s block changed at %s", c.path(), s[0], s[1], strings.Join(compact(changes), "\n"), c.top.Type, want)
			})
		}
	}
	for _, b := range schema {
		if _, skip := notInDiff[b.Type]; !skip && covered[b.Type] == 0 {
			t.Errorf("block %s: no attribute of it shows in the config diff", b.Type)
		}
	}
}
