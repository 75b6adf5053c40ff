// Command genheader writes native/include/scry_trace_format.h, the C view of the trace schema
// declared in trace/schema.go, so that the runtime and the Go reader share one definition.
// Run through `go generate ./trace`; trace/schema_test.go fails when the header is stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scry-pm/scry/trace"
)

func main() {
	out := flag.String("o", "", "output file (default: standard output)")
	flag.Parse()
	text := trace.CHeader()
	if *out == "" {
		fmt.Print(text)
		return
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genheader:", err)
		os.Exit(1)
	}
}
