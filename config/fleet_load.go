package config

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// topContent decodes a file's top-level blocks. The cluster block is the
// one block type that comes both without a label (the single cluster) and
// with one (a fleet member), which one hcl.BodySchema cannot say: the
// labelled cluster blocks are taken out before the rest is decoded and
// put back in source order.
func (l *loader) topContent(body hcl.Body) (*hcl.BodyContent, hcl.Diagnostics) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return body.Content(l.idx.topSchema())
	}
	var named []*hcl.Block
	rest := make(hclsyntax.Blocks, 0, len(sb.Blocks))
	for _, b := range sb.Blocks {
		if b.Type == TypeCluster && len(b.Labels) == 1 {
			named = append(named, b.AsHCLBlock())
			continue
		}
		rest = append(rest, b)
	}
	if len(named) == 0 {
		return body.Content(l.idx.topSchema())
	}
	without := *sb
	without.Blocks = rest
	content, diags := without.Content(l.idx.topSchema())
	content.Blocks = append(content.Blocks, named...)
	sort.SliceStable(content.Blocks, func(i, j int) bool {
		return content.Blocks[i].DefRange.Start.Byte < content.Blocks[j].DefRange.Start.Byte
	})
	return content, diags
}

// LoadFleetDir is LoadFleetFS for the configuration in directory dir,
// with file access confined to dir as LoadDir does.
func LoadFleetDir(dir string, opts Options) (*Config, []*Config, hcl.Diagnostics) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		cfg, diags := LoadDir(dir, opts) // the same error, said as LoadDir says it
		return cfg, nil, diags
	}
	defer root.Close()
	cfg, members, diags := LoadFleetFS(root.FS(), opts)
	cfg.Dir = dir
	for _, m := range members {
		m.Dir = dir
	}
	return cfg, members, diags
}

// LoadFleetFS loads a fleet for all its members at once: cfg is what LoadFS
// returns with Options.Cluster empty (the listing, Config.IsFleet), members
// are what it returns with Options.Cluster set to each member's name, in
// fleet order, and diags are every member's diagnostics merged as LoadFS
// merges them. Each member is evaluated once, where LoadFS for the listing
// and then for each member would evaluate each twice. A single-cluster
// configuration, or one whose clusters could not be read, gives LoadFS's
// result and no members; Options.Cluster is ignored.
func LoadFleetFS(fsys fs.FS, opts Options) (*Config, []*Config, hcl.Diagnostics) {
	opts.Cluster = ""
	first, diags, l := loadFS(fsys, opts)
	if len(first.Fleet) == 0 {
		return first, nil, diags
	}
	return loadMembers(l.parsed, fsys, opts, first, diags)
}

// loadFleet finishes LoadFS for a fleet loaded without Options.Cluster:
// first is the load for the first member. It loads the configuration for
// every other member, so that every error of every member is reported, and
// returns the fleet's listing (Config.IsFleet): the gpuform block, the
// variables and the members, no resources.
//
// An error found for every member is reported once, as it is; one found
// for some members only (cluster.values.x missing on one) says for which.
func loadFleet(parsed *parsedConfig, fsys fs.FS, opts Options, first *Config, firstDiags hcl.Diagnostics) (*Config, hcl.Diagnostics) {
	listing, _, diags := loadMembers(parsed, fsys, opts, first, firstDiags)
	return listing, diags
}

// loadMembers is loadFleet, also returning every member's configuration:
// first's, as a load for its member would give it (its hash names the
// member), and the others', evaluated from parsed (the files are read and
// parsed once for the whole fleet) or, when it is nil, loaded again.
func loadMembers(parsed *parsedConfig, fsys fs.FS, opts Options, first *Config, firstDiags hcl.Diagnostics) (*Config, []*Config, hcl.Diagnostics) {
	names := first.FleetNames()
	perMember := []hcl.Diagnostics{firstDiags}
	members := []*Config{first}
	for _, name := range names[1:] {
		o := opts
		o.Cluster = name
		var m *Config
		var diags hcl.Diagnostics
		if parsed != nil {
			m, diags = parsed.evaluateFor(o)
		} else {
			m, diags = LoadFS(fsys, o)
		}
		members = append(members, m)
		perMember = append(perMember, diags)
	}
	listing := &Config{
		Dir:       first.Dir,
		Files:     first.Files,
		Hash:      first.Hash,
		Settings:  first.Settings,
		Cluster:   &Cluster{Meta: Meta{Type: TypeCluster, Address: TypeCluster}},
		Variables: first.Variables,
		Fleet:     first.Fleet,
	}
	o := opts
	o.Cluster = names[0]
	first.Hash = hashInputs(first.Files, o)
	sumFleetDispatched(names, members, perMember)
	return listing, members, MergeMemberDiagnostics(names, perMember)
}

// parsedConfig is a configuration as loadFS read and parsed it, before
// evaluating: enough to evaluate it again for another fleet member without
// reading or parsing a file again. Evaluating never changes the syntax it
// reads (it replaces the loader's files by outlines, Config.DropSyntax, in
// a map of its own).
type parsedConfig struct {
	fsys fs.FS
	// files are the parsed configuration files by name; order the names,
	// in the order they were parsed.
	files map[string]*hcl.File
	order []string
	// diags are reading and parsing's diagnostics (warnings: a load with
	// an error there is not evaluated).
	diags    hcl.Diagnostics
	varFiles []VarFile
}

// evaluateFor evaluates the configuration for opts.Cluster, as LoadFS
// would.
func (p *parsedConfig) evaluateFor(opts Options) (*Config, hcl.Diagnostics) {
	l := newLoader(p.fsys)
	l.workers = opts.workers
	l.files = maps.Clone(p.files)
	for _, name := range p.order {
		content, _ := l.topContent(p.files[name].Body) // its diagnostics are in p.diags
		for _, b := range content.Blocks {
			l.declare(b)
		}
	}
	l.diags = slices.Clone(p.diags) // declare's own are in p.diags too
	cfg, ok := l.evaluate(p.varFiles, opts)
	if !ok {
		// A budget spent by a concurrent evaluation: load again, one
		// block at a time, as loadFS does.
		opts.workers = 1
		return LoadFS(p.fsys, opts)
	}
	nameBlock(l.diags, "")
	cfg.Dir = "."
	cfg.Hash = hashInputs(l.files, opts)
	return cfg, CleanDiagnostics(l.diags)
}

// MergeMemberDiagnostics merges the diagnostics of the fleet members'
// loads or checks (perMember[i] is names[i]'s): one per range and summary,
// its detail naming the members it was found for unless it was found for
// all of them.
func MergeMemberDiagnostics(names []string, perMember []hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		summary string
		rng     hcl.Range
	}
	var out hcl.Diagnostics
	index := map[key]int{}
	found := map[int][]string{}
	for i, diags := range perMember {
		for _, d := range diags {
			k := key{summary: d.Summary}
			if d.Subject != nil {
				k.rng = *d.Subject
			}
			at, seen := index[k]
			if !seen {
				at = len(out)
				index[k] = at
				out = append(out, d)
			}
			if ms := found[at]; len(ms) == 0 || ms[len(ms)-1] != names[i] {
				found[at] = append(ms, names[i])
			}
		}
	}
	for i, d := range out {
		if ms := found[i]; len(ms) < len(names) {
			c := *d
			c.Detail = strings.TrimSpace(fmt.Sprintf("%s (Evaluated for cluster %s.)", d.Detail, strings.Join(quoteEach(ms), ", ")))
			out[i] = &c
		}
	}
	return CleanDiagnostics(out)
}

// quoteEach quotes every string of s.
func quoteEach(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
