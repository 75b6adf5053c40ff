package trace

import (
	"os"
	"testing"
)

// TestCHeaderUpToDate fails when native/include/scry_trace_format.h differs from what
// trace/schema.go declares: run `go generate ./trace`.
func TestCHeaderUpToDate(t *testing.T) {
	got, err := os.ReadFile("../native/include/scry_trace_format.h")
	if err != nil {
		t.Fatalf("reading the generated header: %v", err)
	}
	if string(got) != CHeader() {
		t.Fatal("native/include/scry_trace_format.h is stale: run `go generate ./trace`")
	}
}
