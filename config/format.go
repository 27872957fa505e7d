package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns a configuration file's source in the canonical layout
// (gpuform fmt), with the file parsed for diagnostics' snippets. A source
// the loader refuses before parsing (size, nesting, encoding: the parser
// would overflow the stack) or with syntax errors is not formatted: out is
// nil and diags say why.
func Format(name string, src []byte) (out []byte, file *hcl.File, diags hcl.Diagnostics) {
	if d := CheckSource(name, src); d != nil {
		return nil, &hcl.File{Body: hcl.EmptyBody(), Bytes: src, Nav: SourceNav(src)}, hcl.Diagnostics{d}
	}
	file, diags = hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, file, diags
	}
	return hclwrite.Format(src), file, nil
}
