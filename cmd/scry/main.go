// Command scry finds crash-consistency bugs in programs that persist data to persistent memory or
// through files. Its command line is package cli's.
package main

import "github.com/scry-pm/scry/cli"

func main() { cli.Main() }
