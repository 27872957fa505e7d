package config

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// loader holds the state of one Load: parsed blocks, the reference graph and
// the values evaluated so far.
type loader struct {
	idx   schemaIndex
	fsys  fs.FS
	files map[string]*hcl.File
	diags hcl.Diagnostics
	funcs map[string]function.Function

	settings  []*hcl.Block
	clusters  []*hcl.Block
	variables []*hcl.Block
	nodes     map[string]*node
	order     []*node // declaration order

	cfg   *Config
	insts *instances
	// marked is true when a variable is sensitive: only then can values
	// carry marks, and only then are they unmarked (a deep, allocating walk).
	marked bool
	// caches are shared by the loader's copies that evaluate blocks
	// concurrently (see visitAll).
	caches *evalCaches
	// spent counts what the configuration's evaluation has used of its
	// budgets, across concurrent evaluations.
	spent *budgets
	// meter measures values against MaxValueSize and MaxEvalBytes.
	meter *meter
	// workers bounds the goroutines that evaluate blocks (Options.workers).
	workers int
	// concurrent is true when the blocks were evaluated concurrently.
	concurrent bool
	// fleet is true when the configuration has named cluster blocks;
	// member is the one it is evaluated for, and memberVal what its
	// expressions see as cluster (fleet.go).
	fleet     bool
	member    *Cluster
	memberVal cty.Value
	// parsed is the configuration as parsed, to evaluate it again for
	// another member (fleet_load.go); nil without a cluster block.
	parsed *parsedConfig
	// hookOffsets are, for each file, the offsets where the source check
	// found an expression that limitExprs rewrites (see limitExprsAt).
	hookOffsets map[string][]int
}

// node is one vertex of the reference graph: a variable, a local value or a
// resource block (with all its instances).
type node struct {
	addr  string // var.x, local.y, tenant.risk
	typ   string // "var", "local" or a resource block type
	name  string
	block *hcl.Block     // resource blocks
	expr  hcl.Expression // locals
	decl  hcl.Range
	deps  []*node
	// missing are the references that name nothing; they evaluate to
	// unknown so that one mistake is reported once, by link.
	missing []hcl.Traversal
	value   cty.Value
	state   int // 0 to evaluate, 2 evaluated (or in a reference cycle)
	bad     bool
	// used is true when another node refers to this one. The value of a
	// resource block nothing refers to (most models) is never built: it
	// stays unknown.
	used bool
}

const (
	rootVar   = "var"
	rootLocal = "local"
)

func newLoader(fsys fs.FS) *loader {
	l := &loader{
		idx:   newSchemaIndex(),
		fsys:  fsys,
		files: map[string]*hcl.File{},
		nodes: map[string]*node{},
		insts: newInstances(),

		caches:      &evalCaches{},
		spent:       &budgets{},
		hookOffsets: map[string][]int{},
	}
	l.meter = newMeter(l.spent)
	l.funcs = functions(fsys, l.meter)
	l.funcs[forIterFunc] = forIterations(&l.spent.forIterations, l.meter.unmeasured)
	return l
}

// declare records one top-level block.
func (l *loader) declare(b *hcl.Block) {
	switch b.Type {
	case TypeGpuform:
		l.settings = append(l.settings, b)
	case TypeCluster:
		l.clusters = append(l.clusters, b)
	case TypeVariable:
		l.variables = append(l.variables, b)
	case TypeLocals:
		attrs, diags := b.Body.JustAttributes()
		l.diags = append(l.diags, diags...)
		for _, a := range slices.SortedFunc(maps.Values(attrs), func(a, b *hcl.Attribute) int { return a.Range.Start.Byte - b.Range.Start.Byte }) {
			l.addNode(&node{addr: rootLocal + "." + a.Name, typ: rootLocal, name: a.Name, expr: a.Expr, decl: a.Range}, "local value")
		}
	default:
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid block name",
				Detail:   fmt.Sprintf("A %s name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes; %q is not valid.", b.Type, name),
				Subject:  b.LabelRanges[0].Ptr(),
			})
			return
		}
		l.addNode(&node{addr: b.Type + "." + name, typ: b.Type, name: name, block: b, decl: b.DefRange}, b.Type)
	}
}

func (l *loader) addNode(n *node, what string) {
	if prev, ok := l.nodes[n.addr]; ok {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Duplicate %s", what),
			Detail:   fmt.Sprintf("%s was already declared at %s. Each name must be unique within its block type.", n.addr, prev.decl),
			Subject:  n.decl.Ptr(),
		})
		return
	}
	l.nodes[n.addr] = n
	l.order = append(l.order, n)
}

// evaluate resolves variables, links references, orders and evaluates the
// graph. Once the references are linked, the files keep only an outline of
// their syntax (Config.DropSyntax) and each block's syntax is freed as it is
// evaluated, so that a large configuration never holds its whole syntax tree
// beside its typed model. ok is false when a concurrent evaluation spent a
// budget: the configuration must then be loaded again one block at a time.
func (l *loader) evaluate(varFiles []VarFile, opts Options) (cfg *Config, ok bool) {
	l.cfg = &Config{Files: l.files}
	l.decodeSettings()
	if !l.bindMember(opts.Cluster) {
		return l.cfg, true
	}
	vars := l.loadVariables(varFiles, opts)
	for _, v := range l.cfg.Variables {
		l.marked = l.marked || v.Sensitive
	}
	for _, v := range vars {
		l.nodes[v.addr] = v
	}
	l.link()
	l.checkCycles()
	l.cfg.DropSyntax()
	if !l.visitAll() {
		return nil, false
	}
	l.insts.finish(l.cfg)
	l.place()
	return l.cfg, true
}

// link resolves every reference of every node to the node it names.
func (l *loader) link() {
	travs := l.traversalsOf(l.order)
	for i, n := range l.order {
		seen := map[*node]bool{}
		for _, t := range travs[i] {
			dep := l.resolve(t, n)
			if dep == nil {
				if r := t.RootName(); r != "each" && r != "count" && (r != rootCluster || l.member == nil) {
					n.missing = append(n.missing, t)
				}
				continue
			}
			if !seen[dep] {
				seen[dep] = true
				n.deps = append(n.deps, dep)
				dep.used = true
			}
		}
	}
}

// traversals returns every variable reference in the node's expressions.
func (n *node) traversals() []hcl.Traversal {
	if n.expr != nil {
		return n.expr.Variables()
	}
	var out []hcl.Traversal
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for _, name := range slices.Sorted(maps.Keys(b.Attributes)) {
			out = append(out, b.Attributes[name].Expr.Variables()...)
		}
		for _, nb := range b.Blocks {
			walk(nb.Body)
		}
	}
	if body, ok := n.block.Body.(*hclsyntax.Body); ok {
		walk(body)
	}
	return out
}

// resolve maps a traversal to the node it refers to, reporting unknown references.
func (l *loader) resolve(t hcl.Traversal, from *node) *node {
	root := t.RootName()
	subject := t.SourceRange().Ptr()
	switch {
	case root == "each" || root == "count":
		return nil
	case root == rootCluster:
		if l.member == nil {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unknown reference",
				Detail:   "cluster is the fleet member a configuration is evaluated for (cluster.name, cluster.labels, cluster.values), defined only in a configuration with named cluster blocks (cluster \"NAME\" { ... }).",
				Subject:  subject,
			})
		}
		return nil
	case root == rootVar || root == rootLocal || isResourceType(root):
	default:
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Unknown reference",
			Detail:   fmt.Sprintf("There is no %q in this language. A reference starts with var., local., priority., mig_layout., pool., tenant. or model., or is each/count inside a repeated block.", root),
			Subject:  subject,
		})
		return nil
	}
	if len(t) < 2 {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid reference",
			Detail:   fmt.Sprintf("A reference to %s must name one, like %s.example.", root, root),
			Subject:  subject,
		})
		return nil
	}
	step, ok := t[1].(hcl.TraverseAttr)
	if !ok {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid reference",
			Detail:   fmt.Sprintf("A reference to %s must name one with a dot, like %s.example.", root, root),
			Subject:  subject,
		})
		return nil
	}
	addr := root + "." + step.Name
	dep, ok := l.nodes[addr]
	if !ok {
		what := map[string]string{rootVar: "input variable", rootLocal: "local value"}[root]
		if what == "" {
			what = root
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Reference to undeclared %s", what),
			Detail:   fmt.Sprintf("%s is not declared in this configuration.%s", addr, l.suggest(root, step.Name)),
			Subject:  subject,
		})
		return nil
	}
	return dep
}

// suggest proposes a declared name close to a mistyped one.
func (l *loader) suggest(root, name string) string {
	best, bestDist := "", min(3, len(name)/2+1)
	for _, n := range l.nodes {
		if n.typ != root {
			continue
		}
		if d := levenshtein(name, n.name); d < bestDist {
			best, bestDist = n.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %s.%s?", root, best)
}

// checkCycles reports every reference cycle by the names of the blocks in
// it, and marks those blocks evaluated (and bad), which leaves the rest of
// the graph acyclic.
func (l *loader) checkCycles() {
	for _, scc := range stronglyConnected(l.order) {
		self := false
		if len(scc) == 1 {
			for _, d := range scc[0].deps {
				if d == scc[0] {
					self = true
				}
			}
			if !self {
				continue
			}
		}
		sort.Slice(scc, func(i, j int) bool { return posLess(scc[i].decl, scc[j].decl) })
		names := make([]string, len(scc))
		members := make(map[*node]bool, len(scc))
		for _, n := range scc {
			members[n] = true
		}
		subject := l.cycleSubject(scc[0], members)
		for i, n := range scc {
			names[i] = n.addr
			n.bad = true
			n.value = cty.DynamicVal
			n.state = 2
		}
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Reference cycle",
			Detail:   fmt.Sprintf("These blocks refer to each other in a cycle, so none can be evaluated first: %s. Remove one of the references.", strings.Join(names, ", ")),
			Subject:  subject,
		})
	}
}

// stronglyConnected returns the strongly connected components of the graph
// (Tarjan's algorithm).
func stronglyConnected(nodes []*node) [][]*node {
	index := map[*node]int{}
	low := map[*node]int{}
	onStack := map[*node]bool{}
	var stack []*node
	var out [][]*node
	next := 0
	var strong func(v *node)
	strong = func(v *node) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range v.deps {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []*node
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			out = append(out, scc)
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			strong(v)
		}
	}
	return out
}

// evalNode evaluates n, whose dependencies are evaluated. Once the
// evaluation has spent MaxEvalBytes (reported where it went over), the
// nodes after it are not evaluated.
func (l *loader) evalNode(n *node) {
	for _, d := range n.deps {
		if d.bad {
			n.bad = true
		}
	}
	n.state = 2
	if l.spentBudget() {
		n.bad, n.value = true, cty.DynamicVal
		return
	}
	from := len(l.diags)
	ctx := l.evalContext(n)
	switch n.typ {
	case rootVar:
	case rootLocal:
		v, diags := n.expr.Value(ctx)
		l.diags = append(l.diags, l.hideSensitive(diags, n.expr, ctx)...)
		if diags.HasErrors() || !literal(n.expr) && !l.measured(v, n.expr.Range()) {
			n.bad = true
			v = cty.DynamicVal
		}
		n.value = v
	default:
		n.value = l.evalResource(n, ctx)
	}
	nameBlock(l.diags[from:], n.addr)
	// Nothing reads a node's syntax once it is evaluated: free it.
	n.block, n.expr = nil, nil
}

// evalContext builds the evaluation context of n from the values of its
// dependencies only, so its size does not grow with the configuration.
func (l *loader) evalContext(n *node) *hcl.EvalContext {
	grouped := map[string]map[string]cty.Value{}
	var firsts []*node // the first dependency of each type
	for _, d := range n.deps {
		m := grouped[d.typ]
		if m == nil {
			m = map[string]cty.Value{}
			grouped[d.typ] = m
			firsts = append(firsts, d)
		}
		v := d.value
		if v == cty.NilVal || d.bad {
			v = cty.DynamicVal
		}
		m[d.name] = v
	}
	vars := make(map[string]cty.Value, len(grouped))
	for _, t := range n.missing {
		root := t.RootName()
		if step, ok := traverseName(t); ok && (root == rootVar || root == rootLocal || isResourceType(root)) {
			if grouped[root] == nil {
				grouped[root] = map[string]cty.Value{}
			}
			if _, ok := grouped[root][step]; !ok {
				grouped[root][step] = cty.DynamicVal
			}
			continue
		}
		vars[root] = cty.DynamicVal
	}
	for typ, m := range grouped {
		vars[typ] = l.groupValue(typ, m, firsts)
	}
	if l.member != nil {
		vars[rootCluster] = l.memberVal
	}
	return &hcl.EvalContext{Variables: vars, Functions: l.funcs}
}

// groupValue is the object of one type's dependencies in an evaluation
// context. Most nodes refer to a single block of a type (a model to its
// tenant, pool and priority), so such one-entry objects are built once per
// referenced node and shared.
func (l *loader) groupValue(typ string, m map[string]cty.Value, firsts []*node) cty.Value {
	if len(m) != 1 {
		return cty.ObjectVal(m)
	}
	for _, d := range firsts {
		if d.typ != typ {
			continue
		}
		if _, ok := m[d.name]; !ok {
			break
		}
		return l.caches.group(d, m)
	}
	return cty.ObjectVal(m)
}

// traverseName returns the name a reference's second step gives (the x of
// var.x), if it is an attribute step.
func traverseName(t hcl.Traversal) (string, bool) {
	if len(t) < 2 {
		return "", false
	}
	step, ok := t[1].(hcl.TraverseAttr)
	return step.Name, ok
}

// cycleSubject is the first reference of n to another node of its cycle,
// or n's declaration when none is found.
func (l *loader) cycleSubject(n *node, cycle map[*node]bool) *hcl.Range {
	for _, t := range n.traversals() {
		name, ok := traverseName(t)
		if !ok {
			continue
		}
		if dep := l.nodes[t.RootName()+"."+name]; dep != nil && cycle[dep] {
			return t.SourceRange().Ptr()
		}
	}
	return n.decl.Ptr()
}

// posLess orders ranges by file then byte offset.
func posLess(a, b hcl.Range) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	return a.Start.Byte < b.Start.Byte
}

// levenshtein is the edit distance between a and b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
