// Package drift classifies how a live cluster differs from the
// configuration at a git ref: objects edited by hand since they were
// applied (live-edit), configuration not applied yet (unapplied), applied
// objects deleted since (missing), and nodes whose GPUs or MIG state
// differ from their pool (hardware). docs/drift.md states the rules.
//
// Classify reads a plan of the ref's configuration against the cluster and
// the configurations at the commits stamped on live objects; it returns a
// Report. Package engine/render writes reports as text, JSON, Markdown and
// Prometheus metrics.
package drift
