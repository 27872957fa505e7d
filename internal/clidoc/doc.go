// Package clidoc keeps the command-line documentation true to a cobra
// command tree: it writes the reference (docs/cli.md) from the commands' own
// help, and checks the command lines and messages the documents quote.
package clidoc
