package engine

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/gpuform/gpuform/config"
)

// BlockAddress is the Extra of a plan warning about a configuration block
// that the code finding it knows by address only (diff and safety work on
// compiled objects, without the configuration): LocateWarnings gives the
// warning that block's source range.
type BlockAddress string

// Warning is a plan warning: a warning diagnostic whose Summary is the whole
// message, summary, about the block at address (empty for none). Like every
// summary it starts upper case, unless it starts with a name or address.
func Warning(summary, address string) *hcl.Diagnostic {
	d := &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary}
	if address != "" {
		d.Extra = BlockAddress(address)
	}
	return d
}

// LocateWarnings sets the Subject of every warning in diags that names a
// block by address (BlockAddress) and has no Subject yet to the range of
// that block's header in cfg, when cfg has the block.
func LocateWarnings(diags hcl.Diagnostics, cfg *config.Config) {
	if cfg == nil {
		return
	}
	for _, d := range diags {
		addr, ok := d.Extra.(BlockAddress)
		if !ok || d.Subject != nil {
			continue
		}
		if m := blockMeta(cfg, string(addr)); m != nil {
			d.Subject = m.DeclRange.Ptr()
		}
	}
}

// blockMeta finds the resource block instance at address in cfg.
func blockMeta(cfg *config.Config, address string) *config.Meta {
	for _, typ := range []string{"pool", "tenant", "model", "mig_layout", "priority"} {
		metas, _ := cfg.Blocks(typ)
		for _, m := range metas {
			if m.Address == address {
				return m
			}
		}
	}
	return nil
}

// WarningTexts returns the messages of diags, for the renderings that carry
// no source position (JSON, Markdown, plan files, drift reports); nil for
// none.
func WarningTexts(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

// WarningsOf turns messages into warnings without a position: a plan
// file's, which records their texts, or the preview's own.
func WarningsOf(texts []string) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, t := range texts {
		out = append(out, Warning(t, ""))
	}
	return out
}
