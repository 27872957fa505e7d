package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// tagExceptions are the schema items and tags that do not pair up, with
// the reason: everything else in Schema must have a field tagged with its
// name and every tag must name something in Schema.
var tagExceptions = map[string]string{
	"locals":              "no Config field: locals show in the attributes of the blocks that use them",
	"variable.type":       "listed as value: the final value, converted to the type",
	"variable.default":    "listed as value: the final value, the default when nothing else sets it",
	"variable.nullable":   "a check on the value: a value it refuses fails the load",
	"variable.validation": "checks on the value: a value they refuse fails the load",
	"variable.value":      "a tag without an attribute: the final value of default, type, --var and the environment",
}

// TestTagsCoverSchema fails when a block, nested block, label or attribute
// of Schema has no field tagged with its name, or a tag names nothing in
// Schema: the tags and the schema describe the same language.
func TestTagsCoverSchema(t *testing.T) {
	plan, err := planOf(reflect.TypeFor[Config](), true)
	if err != nil {
		t.Fatal(err)
	}
	if bad := tagMismatches(Schema(), plan); len(bad) > 0 {
		t.Errorf("the config tags and Schema disagree:\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestTagsCoverSchemaCatchesOmissions makes sure the check above is not
// vacuous: a schema item without a field, and a tag without a schema item,
// are reported.
func TestTagsCoverSchemaCatchesOmissions(t *testing.T) {
	plan, err := planOf(reflect.TypeFor[Config](), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(s []BlockSchema) []BlockSchema
		want   string
	}{
		{"attribute", func(s []BlockSchema) []BlockSchema {
			s[blockIndex(s, TypeTenant)].Attrs = append(s[blockIndex(s, TypeTenant)].Attrs, attr("alert", cty.String, ""))
			return s
		}, "tenant.alert: no field tagged with it"},
		{"object attribute part", func(s []BlockSchema) []BlockSchema {
			m := &s[blockIndex(s, TypeModel)]
			m.lookupAttr("replicas").Type = cty.Object(map[string]cty.Type{"min": cty.Number, "max": cty.Number, "step": cty.Number})
			return s
		}, "model.replicas.step: no field tagged with it"},
		{"nested block", func(s []BlockSchema) []BlockSchema {
			s[blockIndex(s, TypePool)].Blocks = append(s[blockIndex(s, TypePool)].Blocks, BlockSchema{Type: "spread"})
			return s
		}, "pool.spread: no field tagged with it"},
		{"block", func(s []BlockSchema) []BlockSchema {
			return append(s, BlockSchema{Type: "budget"})
		}, "budget: no field tagged with it"},
		{"tag without attribute", func(s []BlockSchema) []BlockSchema {
			c := &s[blockIndex(s, TypeCluster)]
			c.Attrs = slices.DeleteFunc(c.Attrs, func(a AttrSchema) bool { return a.Name == "simulated" })
			return s
		}, "cluster.simulated: tagged, but not in Schema"},
		{"label", func(s []BlockSchema) []BlockSchema {
			s[blockIndex(s, TypeTenant)].Blocks[0].Labels = []string{"pool_name"}
			return s
		}, "tenant.quota: label pool_name has no field tagged with it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tagMismatches(tc.change(Schema()), plan)
			if !containsString(bad, tc.want) {
				t.Errorf("reported %q; want %q", bad, tc.want)
			}
		})
	}
}

func blockIndex(s []BlockSchema, typ string) int {
	for i := range s {
		if s[i].Type == typ {
			return i
		}
	}
	panic("no block " + typ)
}

// tagMismatches lists the top-level blocks of schema without a field of
// plan (Config's) and the mismatches within each block.
func tagMismatches(schema []BlockSchema, plan *structPlan) []string {
	var bad []string
	seen := map[string]bool{}
	for i := range schema {
		b := &schema[i]
		seen[b.Type] = true
		if _, ok := tagExceptions[b.Type]; ok {
			continue
		}
		f, ok := fieldNamed(plan, b.Type, kindBlock)
		if !ok {
			bad = append(bad, b.Type+": no field tagged with it")
			continue
		}
		bad = append(bad, blockMismatches(b.Type, b, f.sub)...)
	}
	for _, f := range plan.fields {
		if !seen[f.name] {
			bad = append(bad, f.name+": tagged, but not in Schema")
		}
	}
	return bad
}

// blockMismatches compares block schema b, named path, with plan p.
func blockMismatches(path string, b *BlockSchema, p *structPlan) []string {
	var bad []string
	tagged := map[string]bool{}
	for _, f := range p.fields {
		tagged[f.name] = true
		name, _, _ := strings.Cut(f.name, ".")
		_, excepted := tagExceptions[path+"."+name]
		switch {
		case excepted:
		case f.kind == kindBlock:
			if nb := nestedSchema(b, f.name); nb == nil {
				bad = append(bad, path+"."+f.name+": tagged, but not in Schema")
			} else {
				bad = append(bad, blockMismatches(path+"."+f.name, nb, f.sub)...)
			}
		case f.kind == kindLabel:
			if !containsString(b.Labels, f.name) {
				bad = append(bad, path+": label field "+f.name+" is not a label in Schema")
			}
		case b.lookupAttr(name) == nil:
			bad = append(bad, path+"."+f.name+": tagged, but not in Schema")
		}
	}
	for _, l := range b.Labels {
		if _, ok := fieldNamed(p, l, kindLabel); !ok && strings.Contains(path, ".") {
			// A nested block's labels are fields; a top-level block's are in Meta.
			bad = append(bad, path+": label "+l+" has no field tagged with it")
		}
	}
	for _, a := range b.Attrs {
		if _, ok := tagExceptions[path+"."+a.Name]; ok || tagged[a.Name] {
			continue
		}
		if !a.Type.IsObjectType() {
			bad = append(bad, path+"."+a.Name+": no field tagged with it")
			continue
		}
		for part := range a.Type.AttributeTypes() {
			if !tagged[a.Name+"."+part] {
				bad = append(bad, path+"."+a.Name+"."+part+": no field tagged with it")
			}
		}
	}
	for _, nb := range b.Blocks {
		if _, ok := tagExceptions[path+"."+nb.Type]; !ok && !tagged[nb.Type] {
			bad = append(bad, path+"."+nb.Type+": no field tagged with it")
		}
	}
	return bad
}

func nestedSchema(b *BlockSchema, typ string) *BlockSchema {
	for i := range b.Blocks {
		if b.Blocks[i].Type == typ {
			return &b.Blocks[i]
		}
	}
	return nil
}

func fieldNamed(p *structPlan, name string, kind fieldKind) (tagField, bool) {
	for _, f := range p.fields {
		if f.name == name && f.kind == kind {
			return f, true
		}
	}
	return tagField{}, false
}

// A block type of the test only, tagged with every option.
type (
	fakeTarget struct {
		Meta
		Size int `config:"size"`
	}
	fakeRule struct {
		Meta
		Channel   string  `config:"channel,label"`
		Threshold float64 `config:"threshold"`
	}
	fakeStep struct {
		Meta
		Wait int `config:"wait"`
	}
	fakeAlert struct {
		Meta
		Severity   string            `config:"severity"`
		Note       string            `config:"note,omitempty"`
		Tags       []string          `config:"tags,omitempty"`
		Matchers   map[string]string `config:"matchers"`
		Rules      []*fakeRule       `config:"rule,block"`
		Steps      []*fakeStep       `config:"step,block"`
		Escalation *fakeStep         `config:"escalation,block"`
		Target     *fakeTarget       `config:"target,ref,omitempty"`
		Others     []*fakeTarget     `config:"others,ref"`
		Repeat     int               `config:"repeat,alt=matchers"`
		Every      int               `config:"window.every"`
		Secret     cty.Value         `config:"secret,sensitiveif=hidden"`
		Hidden     bool              `config:"hidden"`
		Scratch    string            `config:"-"`
		unexported int
	}
	fakeNote struct {
		Meta
		Text string `config:"text,omitempty"`
	}
	fakeConfig struct {
		Name    string        `config:"-"`
		Alerts  []*fakeAlert  `config:"alert,block"`
		Targets []*fakeTarget `config:"target,block"`
		Note    *fakeNote     `config:"note,block,omitempty"`
		Memo    *fakeNote     `config:"memo,block"`
	}
)

// TestFlattenStruct flattens a block type of the test only: a new block
// lists its attributes from its tags alone.
func TestFlattenStruct(t *testing.T) {
	x := &fakeTarget{Meta: Meta{Address: "target.x"}, Size: 3}
	y := &fakeTarget{Meta: Meta{Address: "target.y"}, Size: 4}
	cfg := &fakeConfig{
		Name:    "ignored",
		Targets: []*fakeTarget{x, y},
		Note:    &fakeNote{},
		Memo:    &fakeNote{Text: "x"},
		Alerts: []*fakeAlert{{
			Meta:     Meta{Address: "alert.a", Sensitive: map[string]bool{"window": true, "rule": true}},
			Severity: "page",
			Matchers: map[string]string{"team": "risk", "env": "prod"},
			Rules: []*fakeRule{
				{Channel: "slack", Threshold: 0.5},
				{Channel: "email", Threshold: 0.9},
			},
			Steps:      []*fakeStep{{Wait: 1}, {Meta: Meta{Sensitive: map[string]bool{"wait": true}}, Wait: 2}},
			Escalation: &fakeStep{Wait: 5},
			Target:     x,
			Others:     []*fakeTarget{y, x},
			Every:      60,
			Secret:     cty.StringVal("hunter2"),
			Hidden:     true,
			Scratch:    "ignored",
		}, {
			Meta:     Meta{Address: "alert.b"},
			Note:     "quiet",
			Tags:     []string{"a"},
			Secret:   cty.ObjectVal(map[string]cty.Value{"n": cty.NumberIntVal(1)}),
			Severity: "ticket",
		}},
	}
	want := []string{
		"alert alert.a",
		`  severity = "page"`,
		`  matchers["env"] = "prod"`,
		`  matchers["team"] = "risk"`,
		`  rule["email"].threshold = 0.9 (sensitive)`,
		`  rule["slack"].threshold = 0.5 (sensitive)`,
		`  step[0].wait = 1`,
		`  step[1].wait = 2 (sensitive)`,
		`  escalation.wait = 5`,
		`  target = "target.x"`,
		`  others = []interface {}{"target.y", "target.x"}`,
		`  window.every = 60 (sensitive)`,
		`  secret = "hunter2" (sensitive)`,
		`  hidden = true`,
		"alert alert.b",
		`  severity = "ticket"`,
		`  note = "quiet"`,
		`  tags = []interface {}{"a"}`,
		`  others = []interface {}{}`,
		`  repeat = 0`,
		`  window.every = 0`,
		`  secret = map[string]interface {}{"n":1}`,
		`  hidden = false`,
		"target target.x",
		"  size = 3",
		"target target.y",
		"  size = 4",
		"memo memo",
		`  text = "x"`,
	}
	var got []string
	for _, b := range FlattenStruct(cfg) {
		got = append(got, b.Type+" "+b.Address)
		for _, a := range b.Attrs {
			line := fmt.Sprintf("  %s = %#v", a.Path, a.Value)
			if a.Sensitive {
				line += " (sensitive)"
			}
			got = append(got, line)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FlattenStruct:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := (*Config)(nil).Flatten(); got != nil {
		t.Errorf("a nil Config flattens to %v", got)
	}
}

// TestFlattenStructRefusesBadTags: a field without a tag, or with a tag
// that does not suit it, is a programming error reported by name.
func TestFlattenStructRefusesBadTags(t *testing.T) {
	type untagged struct {
		Meta
		Size int
	}
	type unknownOption struct {
		Meta
		Size int `config:"size,omitzero"`
	}
	type twoKinds struct {
		Meta
		Other *fakeTarget `config:"other,ref,block"`
	}
	type refToScalar struct {
		Meta
		Other *int `config:"other,ref"`
	}
	type badAlt struct {
		Meta
		Size int `config:"size,alt=slices"`
	}
	type badSensitiveIf struct {
		Meta
		Size int    `config:"size,sensitiveif=name"`
		Name string `config:"name"`
	}
	type badLabel struct {
		Meta
		Pool int `config:"pool,label"`
	}
	type badAttr struct {
		Meta
		Nested [][]string `config:"nested"`
	}
	type emptyName struct {
		Meta
		Size int `config:",omitempty"`
	}
	type selfNesting struct {
		Meta
		Inner []*selfNesting `config:"inner,block"`
	}
	for _, tc := range []struct {
		cfg  any
		want string
	}{
		{&struct {
			B []*untagged `config:"b,block"`
		}{}, "untagged.Size: no config tag"},
		{&struct {
			B []*unknownOption `config:"b,block"`
		}{}, `unknown option "omitzero"`},
		{&struct {
			B []*twoKinds `config:"b,block"`
		}{}, "at most one of ref, block and label"},
		{&struct {
			B []*refToScalar `config:"b,block"`
		}{}, "refToScalar.Other: a block or reference must be"},
		{&struct {
			B []*badAlt `config:"b,block"`
		}{}, "alt=slices names no attribute"},
		{&struct {
			B []*badSensitiveIf `config:"b,block"`
		}{}, "sensitiveif=name names no bool attribute"},
		{&struct {
			B []*badLabel `config:"b,block"`
		}{}, "a label must be a string"},
		{&struct {
			B []*badAttr `config:"b,block"`
		}{}, "an attribute cannot be a [][]string"},
		{&struct {
			B []*emptyName `config:"b,block"`
		}{}, "names nothing"},
		{&struct {
			B []*selfNesting `config:"b,block"`
		}{}, "selfNesting nests itself"},
		{&struct {
			Size int `config:"size"`
		}{}, "a top-level field must be a block"},
		{&struct {
			B []*fakeTarget
		}{}, ".B: no config tag"},
		{fakeConfig{}, "want a pointer to a struct"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatalf("FlattenStruct(%T) did not panic", tc.cfg)
				}
				if msg := fmt.Sprint(r); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q; want it to contain %q", msg, tc.want)
				}
			}()
			FlattenStruct(tc.cfg)
		})
	}
}

// lookupAttr finds attribute name in b.
func (b *BlockSchema) lookupAttr(name string) *AttrSchema {
	for i := range b.Attrs {
		if b.Attrs[i].Name == name {
			return &b.Attrs[i]
		}
	}
	return nil
}
