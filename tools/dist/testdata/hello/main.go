// Command hello is a small program tools/dist's tests release.
package main

import "fmt"

var version = "unset"

func main() { fmt.Println("hello", version) }
