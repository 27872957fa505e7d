package config

import (
	"fmt"
	"io/fs"
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

// loadFleet finishes LoadFS for a fleet loaded without Options.Cluster:
// first is the load for the first member. It loads the configuration for
// every other member, so that every error of every member is reported, and
// returns the fleet's listing (Config.IsFleet): the gpuform block, the
// variables and the members, no resources.
//
// An error found for every member is reported once, as it is; one found
// for some members only (cluster.values.x missing on one) says for which.
func loadFleet(fsys fs.FS, opts Options, first *Config, firstDiags hcl.Diagnostics) (*Config, hcl.Diagnostics) {
	names := first.FleetNames()
	perMember := []hcl.Diagnostics{firstDiags}
	for _, name := range names[1:] {
		o := opts
		o.Cluster = name
		_, diags := LoadFS(fsys, o)
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
	return listing, MergeMemberDiagnostics(names, perMember)
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
