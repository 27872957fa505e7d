package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// rootCluster is the reference to the fleet member a configuration is
// evaluated for: cluster.name, cluster.labels, cluster.values.
const rootCluster = "cluster"

// fleetOnlyArgs are the cluster block arguments only a named cluster block
// (a fleet member) takes.
var fleetOnlyArgs = []string{"labels", "values", "role", "kubeconfig_secret"}

// IsFleet reports whether c lists a fleet's members without being
// evaluated for any of them: what LoadFS returns for a configuration with
// named cluster blocks when Options.Cluster is empty. Such a Config holds
// the gpuform block, the variables and Fleet, but no pools, tenants or
// models: it cannot be planned. Load it again with Options.Cluster set to
// one of Fleet's names for that member's configuration.
func (c *Config) IsFleet() bool {
	return c != nil && len(c.Fleet) > 0 && (c.Cluster == nil || c.Cluster.Name == "")
}

// Member returns the fleet member called name, or nil.
func (c *Config) Member(name string) *Cluster {
	for _, m := range c.Fleet {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// FleetNames returns the names of the fleet's members, in source order.
func (c *Config) FleetNames() []string {
	out := make([]string, len(c.Fleet))
	for i, m := range c.Fleet {
		out[i] = m.Name
	}
	return out
}

// decodeClusters decodes the cluster blocks: the one unlabelled block of a
// single-cluster configuration, or the named blocks of a fleet into
// cfg.Fleet. Mixing the two is an error at each unlabelled block.
func (l *loader) decodeClusters(ctx *hcl.EvalContext) {
	var named, unnamed []*hcl.Block
	for _, b := range l.clusters {
		if len(b.Labels) == 1 {
			named = append(named, b)
		} else {
			unnamed = append(unnamed, b)
		}
	}
	l.cfg.Cluster = &Cluster{Meta: Meta{Type: TypeCluster, Address: TypeCluster}}
	if len(named) == 0 {
		if b := l.single(unnamed, TypeCluster, "at most one"); b != nil {
			c := &Cluster{Meta: Meta{Type: TypeCluster, Address: TypeCluster, DeclRange: b.DefRange}}
			d := l.decodeFixed(&c.Meta, b, ctx)
			c.Kubeconfig = d.str("kubeconfig", "")
			c.Context = d.str("context", "")
			c.Simulated = d.str("simulated", "")
			for _, a := range fleetOnlyArgs {
				if c.HasAttr(a) {
					d.fail("Fleet argument in the cluster block", fmt.Sprintf("%s is an argument of a named cluster block (cluster \"NAME\" { ... }), a member of a fleet; the unlabelled cluster block is the single cluster of the configuration.", a), c.Range(a))
				}
			}
			l.cfg.Cluster = c
		}
		return
	}
	l.fleet = true
	for _, b := range unnamed {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Unnamed cluster block in a fleet",
			Detail:   fmt.Sprintf("This configuration names its clusters (the first is cluster %q at %s), so every cluster block needs a name: cluster \"NAME\" { ... }.", named[0].Labels[0], named[0].DefRange),
			Subject:  b.DefRange.Ptr(),
		})
	}
	seen := map[string]hcl.Range{}
	var manager *Cluster
	for _, b := range named {
		c := l.decodeMember(b, ctx, seen)
		if c == nil {
			continue
		}
		if c.Role == RoleManager {
			if manager != nil {
				// Reported, and the member kept: it is declared, and
				// placements naming it are right.
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Two manager clusters",
					Detail:   fmt.Sprintf("A fleet has at most one MultiKueue manager cluster; cluster %q at %s is one already.", manager.Name, manager.Range("role")),
					Subject:  c.Range("role").Ptr(),
				})
			} else {
				manager = c
			}
		}
		l.cfg.Fleet = append(l.cfg.Fleet, c)
	}
}

// decodeMember decodes one named cluster block; nil when its name is
// invalid or taken (seen holds the names so far).
func (l *loader) decodeMember(b *hcl.Block, ctx *hcl.EvalContext, seen map[string]hcl.Range) *Cluster {
	name := b.Labels[0]
	c := &Cluster{Name: name, Meta: Meta{Type: TypeCluster, Label: name, Name: name, Address: TypeCluster + "." + name, DeclRange: b.DefRange}}
	d := l.decodeFixed(&c.Meta, b, ctx)
	c.Kubeconfig = d.str("kubeconfig", "")
	c.Context = d.str("context", "")
	c.Simulated = d.str("simulated", "")
	c.Labels = d.strMap("labels")
	if d.has("role") {
		c.Role = d.enum("role", "", RoleManager)
	}
	c.KubeconfigSecret = d.str("kubeconfig_secret", "")
	if v, ok := d.get("values"); ok {
		if t := v.Type(); !t.IsObjectType() && !t.IsMapType() {
			d.fail("Invalid cluster values", fmt.Sprintf("values must be an object, such as { a100_gpus = 8 }, which expressions read as cluster.values; got %s.", t.FriendlyName()), c.Range("values"))
		} else {
			c.Values = v
		}
	}
	if c.Role == RoleManager && c.KubeconfigSecret != "" {
		d.fail("Secret named for the manager", "kubeconfig_secret names the Secret through which the MultiKueue manager reaches a worker cluster; the manager does not reach itself. Remove it here.", c.Range("kubeconfig_secret"))
	}
	if c.KubeconfigSecret != "" && !isDNSSubdomain(c.KubeconfigSecret) {
		d.fail("Invalid kubeconfig_secret", fmt.Sprintf("kubeconfig_secret must be a Secret name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters; %q is not.", c.KubeconfigSecret), c.Range("kubeconfig_secret"))
	}
	if !isDNSLabel(name) {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid cluster name",
			Detail:   fmt.Sprintf("A cluster name must be a DNS label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit (it names Kubernetes objects such as a MultiKueueCluster); %q is not.", name),
			Subject:  b.LabelRanges[0].Ptr(),
		})
		return nil
	}
	if prev, dup := seen[name]; dup {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate cluster block",
			Detail:   fmt.Sprintf("cluster %q was already declared at %s. Each cluster name must be unique.", name, prev),
			Subject:  b.LabelRanges[0].Ptr(),
		})
		return nil
	}
	seen[name] = b.DefRange
	return c
}

// bindMember chooses the fleet member the configuration is evaluated for:
// Options.Cluster, or the first member when it is empty (LoadFS then
// evaluates the others in turn). It reports a name that is not a member,
// and a member asked of a single-cluster configuration; false then.
func (l *loader) bindMember(name string) bool {
	if !l.fleet {
		if name == "" {
			return true
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Not a fleet",
			Detail:   fmt.Sprintf("Cluster %q was asked for, but this configuration has no named cluster blocks (cluster \"NAME\" { ... }): it describes a single cluster.", name),
		})
		return false
	}
	if len(l.cfg.Fleet) == 0 {
		return false // every named block was refused, as reported
	}
	m := l.cfg.Fleet[0]
	if name != "" {
		if m = l.cfg.Member(name); m == nil {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unknown cluster",
				Detail:   fmt.Sprintf("There is no cluster %q in this fleet; its clusters are %s.", name, quoteList(l.cfg.FleetNames())),
			})
			return false
		}
	}
	l.member = m
	l.memberVal = memberValue(m)
	l.cfg.Cluster = m
	return true
}

// memberValue is what expressions see as cluster while the configuration
// is evaluated for member m.
func memberValue(m *Cluster) cty.Value {
	labels := cty.MapValEmpty(cty.String)
	if len(m.Labels) > 0 {
		lv := make(map[string]cty.Value, len(m.Labels))
		for k, v := range m.Labels {
			lv[k] = cty.StringVal(v)
		}
		labels = cty.MapVal(lv)
	}
	values := m.Values
	if values == cty.NilVal {
		values = cty.EmptyObjectVal
	}
	return cty.ObjectVal(map[string]cty.Value{
		"name":   cty.StringVal(m.Name),
		"labels": labels,
		"values": values,
	})
}

// isDNSLabel reports whether s is an RFC 1123 label.
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is an RFC 1123 subdomain (a Secret's
// name).
func isDNSSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if !isDNSLabel(part) {
			return false
		}
	}
	return true
}
