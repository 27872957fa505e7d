// Package fleet runs the pipeline of every member of a fleet (the named
// cluster blocks of a configuration, each evaluated for itself): at most
// a bound at once and in fleet order whatever order they finish in; it
// binds a saved fleet plan to its members and their configurations, and
// lays out what the commands print for a fleet (summaries, a JSON
// document per member, the capacity table per tenant). The command line
// builds each member's stack.Stack; nothing here reads a cluster itself.
package fleet
