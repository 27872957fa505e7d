// Package render writes what gpuform computed for people and tools to
// read: a plan as text (the Terraform-like diff), JSON (--json) or
// Markdown; a pull request preview (plan --base) as text, JSON or Markdown,
// and the Markdown cut into GitHub comments (SplitComments); the desired
// objects as YAML (gpuform render); a drift report as text, JSON, Markdown
// or Prometheus metrics.
//
// Renderers only read engine and drift values and write to an io.Writer
// (or return a string); they do no other I/O. Values from sensitive
// variables show as engine.SensitiveValue in every format.
package render
