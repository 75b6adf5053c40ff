package fsmode

import (
	"context"
	"os"
	"testing"

	"github.com/scry-pm/scry/trace"
)

func TestManualRecord(t *testing.T) {
	if os.Getenv("MANUAL") == "" {
		t.Skip()
	}
	dir := t.TempDir()
	res, err := Record(context.Background(), RecordOptions{Dir: dir, Args: []string{"/tmp/stt/t"}, Stack: true, Trace: "/tmp/fsplay/t.trace"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	r, _ := trace.Open("/tmp/fsplay/t.trace")
	trace.Dump(os.Stdout, r, trace.DumpOptions{SiteTable: true, Stacks: true})
}
