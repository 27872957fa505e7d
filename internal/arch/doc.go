// Package arch holds the tests that keep gpuform's house in shape: the
// direction of dependencies between its packages (no provider imports
// another), the files allowed to import unsafe, and the size of its files,
// functions and command-line package. It has no code of its own.
package arch
