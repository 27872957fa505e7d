// Package engine holds gpuform's plan data and the steps that work on it:
// the desired and live objects, Diff into a Plan, plan files, the apply walk
// with its safety checks and retries, drift and the renderers. Compiling a
// configuration into a Desired is package engine/compile.
package engine
