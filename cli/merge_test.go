package cli

import (
	"strings"
	"testing"
)

func TestResolveShard(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    string
		env     map[string]string
		i, n    int
		wantErr string
	}{
		{"none", "", nil, 0, 0, ""},
		{"explicit", "2/5", nil, 2, 5, ""},
		{"explicit out of range", "5/5", nil, 0, 0, "0 <= I < N"},
		{"slurm", "auto", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, 3, 4, ""},
		{"slurm from 1", "auto", map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, 3, 4, ""},
		{"slurm step", "auto", map[string]string{"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"}, 3, 4, ""},
		{"slurm count given", "auto/8", map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "4"}, 7, 8, ""},
		{"slurm bad id", "auto", map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "4"}, 0, 0, "not a number"},
		{"kubernetes", "auto/4", map[string]string{"JOB_COMPLETION_INDEX": "1"}, 1, 4, ""},
		{"kubernetes count in env", "auto", map[string]string{"JOB_COMPLETION_INDEX": "2", "SCRY_SHARD_COUNT": "3"}, 2, 3, ""},
		{"kubernetes no count", "auto", map[string]string{"JOB_COMPLETION_INDEX": "2"}, 0, 0, "auto/N"},
		{"kubernetes out of range", "auto/2", map[string]string{"JOB_COMPLETION_INDEX": "2"}, 0, 0, "Kubernetes"},
		{"ci matrix", "auto", map[string]string{"SCRY_SHARD_INDEX": "0", "SCRY_SHARD_COUNT": "2"}, 0, 2, ""},
		{"nothing set", "auto", nil, 0, 0, "no shard index"},
		{"bad count", "auto/0", nil, 0, 0, "auto/N"},
		{"bad spec", "auto4", nil, 0, 0, "want I/N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, err := resolveShard(tc.spec, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%q: %v, want an error with %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil || sh.Index != tc.i || sh.Count != tc.n {
				t.Errorf("%q: %d/%d, %v; want %d/%d", tc.spec, sh.Index, sh.Count, err, tc.i, tc.n)
			}
		})
	}
}

// TestShardCommandErrors: a bad --shard, a shard without a JSON report and a merge of nothing or
// of missing files end with status 2 and say why.
func TestShardCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "--shard", "4/4", "--trace", "t", "--workload", "w", "--", "p", "{pool}"}, "0 <= I < N"},
		{[]string{"explore", "--shard", "x", "--trace", "t", "--workload", "w", "--", "p", "{pool}"}, "want I/N"},
		{[]string{"explore", "--shard", "0/2", "--trace", "t", "--workload", "w", "--", "p", "{pool}"}, "--format json"},
		{[]string{"merge"}, "requires at least 1 arg"},
		{[]string{"merge", dir + "/none.json"}, "none.json"},
		{[]string{"merge", "--format", "xml", dir + "/none.json"}, "unknown --format"},
	} {
		var out, errOut strings.Builder
		if code := Run(Config{}, tc.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("scry %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, errOut.String(), tc.want)
		}
	}
}
