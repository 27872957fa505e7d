// Package arch holds the tests that keep gpuform's house in shape: the
// direction of dependencies between its packages (no provider imports
// another), the files allowed to import unsafe, the one file that may change
// the collector's settings, and the size of its files, functions and
// command-line package. It has no code of its own.
package arch
