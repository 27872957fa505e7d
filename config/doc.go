// Package config loads a gpuform configuration: it parses the HCL files of
// a directory, evaluates variables, locals, for_each and count, links
// references and decodes every block into the typed model (Config and the
// block types). Schema describes the language; docs/language.md documents
// it.
//
// # Config tags
//
// Every field of Config and of the block types (Settings, Tenant, Quota ...)
// carries a `config` struct tag naming the block or attribute it holds, so
// that a block's attributes are described once, next to their fields:
// Flatten lists a block's attributes from the tags, and the PR preview's
// config diff (engine.ConfigDiff) compares what Flatten lists. A field
// without a tag is a programming error that Flatten reports by panicking,
// and a test pairs every tag with Schema, so a new attribute cannot
// silently stay out of the diff. A tag is a name, then options separated
// by commas:
//
//	config:"-"                   not an attribute (Variable.Source, Quota.Pool)
//	config:"weight"              an attribute, always listed
//	config:"replicas.min"        part of an object attribute, listed under that
//	                             path; sensitive when replicas is
//	config:"cohort,omitempty"    left out when zero: "", 0, false, nil, an empty list
//	config:"gpus,alt=slices"     an alternative to attribute slices: left out when
//	                             zero while slices is not empty
//	config:"value,sensitiveif=sensitive"
//	                             also sensitive whenever bool attribute sensitive is true
//	config:"pool,ref"            a reference to another block (*T or []*T): listed as
//	                             its address (a list of addresses), never sensitive
//	config:"quota,block"         nested blocks, *T (at most one) or []*T: their
//	                             attributes are listed under time_slicing. (for *T),
//	                             quota["a100"]. (keyed by the block's label field, in
//	                             label order) or device[0]. (by index, for a block
//	                             without one), and are sensitive when the parent's
//	                             attribute of that name is
//	config:"pool,label"          the block's label: the key of a keyed nested block,
//	                             not an attribute of its own
//
// Config's own fields name the top-level blocks (`config:"tenant,block"`);
// there, omitempty leaves out a block that lists no attribute (the zero
// Cluster of a configuration without a cluster block). A block instance's
// address is its Meta.Address, or its type when that is empty.
//
// Flatten lists values as plain Go: strings, bools and numbers as the field
// holds them, lists as []any, maps as one path per key (labels["team"]) in
// key order, cty values (a variable's) as their JSON decoding (nil when
// unknown). An attribute is sensitive when its Meta marks it so (or the
// options above say).
package config
