package config

import (
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// DropSyntax replaces the syntax tree of every file with an outline of its
// top-level blocks, keeping the source bytes. Diagnostics still show the
// file, line, source snippet and enclosing block ("in tenant "a""); the
// expressions, which once evaluated are not read again, are freed. A plan
// calls it once the configuration is compiled: for 1,000 tenants the tree
// is about a fifth of the memory a plan holds.
func (c *Config) DropSyntax() {
	for name, f := range c.Files {
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		o := make(outline, len(body.Blocks))
		for i, b := range body.Blocks {
			o[i] = outlineBlock{typ: b.Type, labels: b.Labels, rng: b.Range(), def: b.DefRange()}
		}
		c.Files[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: f.Bytes, Nav: o}
	}
}

// outline is the top-level blocks of a file in source order, for
// diagnostics: it answers hcled.ContextString and ContextDefRange as
// hclsyntax's navigation does.
type outline []outlineBlock

// outlineBlock is one top-level block: its header is written only when a
// diagnostic asks for it, so that dropping the syntax formats none.
type outlineBlock struct {
	typ      string
	labels   []string
	rng, def hcl.Range
}

// at returns the block whose range holds offset, or nil. The blocks are in
// source order and do not overlap, so it is found by binary search: a
// diagnostic per block costs no scan of the file's blocks each.
func (o outline) at(offset int) *outlineBlock {
	i := sort.Search(len(o), func(i int) bool { return o[i].rng.End.Byte > offset })
	if i < len(o) && o[i].rng.ContainsOffset(offset) {
		return &o[i]
	}
	return nil
}

// ContextString returns the header of the top-level block at offset.
func (o outline) ContextString(offset int) string {
	if b := o.at(offset); b != nil {
		return blockHeader(b.typ, b.labels)
	}
	return ""
}

// ContextDefRange returns the definition range of the top-level block at
// offset.
func (o outline) ContextDefRange(offset int) hcl.Range {
	if b := o.at(offset); b != nil {
		return b.def
	}
	return hcl.Range{}
}
