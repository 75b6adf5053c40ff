package workload

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func generate(t *testing.T, opts KVOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := KV(&b, opts); err != nil {
		t.Fatalf("KV(%+v): %v", opts, err)
	}
	return b.String()
}

var mapcliLine = regexp.MustCompile(`^[irc] [1-9][0-9]*$`)

type parsedOp struct {
	op  byte
	key uint64
}

func parse(t *testing.T, out string, keys uint64) []parsedOp {
	t.Helper()
	var ops []parsedOp
	sc := bufio.NewScanner(strings.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !mapcliLine.MatchString(line) {
			t.Fatalf("line %d %q is not a mapcli command", n, line)
		}
		k, err := strconv.ParseUint(line[2:], 10, 64)
		if err != nil {
			t.Fatalf("line %d %q: %v", n, line, err)
		}
		if keys != 0 && (k < 1 || k > keys) {
			t.Fatalf("line %d %q: key outside 1..%d", n, line, keys)
		}
		ops = append(ops, parsedOp{line[0], k})
	}
	return ops
}

func TestKVDeterministic(t *testing.T) {
	tests := []KVOptions{
		{Ops: 0, Seed: 1},
		{Ops: 1, Seed: 1},
		{Ops: 100, Seed: 42},
		{Ops: 1000, Seed: 7, Keys: 10},
		{Ops: 500, Seed: 0, MapStyle: StyleMapcli},
	}
	for _, opts := range tests {
		a, b := generate(t, opts), generate(t, opts)
		if a != b {
			t.Errorf("KV(%+v) differs between two runs", opts)
		}
		if got := strings.Count(a, "\n"); got != opts.Ops {
			t.Errorf("KV(%+v) wrote %d lines, want %d", opts, got, opts.Ops)
		}
		if opts.Ops >= 100 {
			other := opts
			other.Seed++
			if generate(t, other) == a {
				t.Errorf("KV(%+v) is the same for seeds %d and %d", opts, opts.Seed, other.Seed)
			}
		}
	}
}

// TestKVGolden pins the output for one seed, so that a change of the generator is deliberate.
func TestKVGolden(t *testing.T) {
	got := generate(t, KVOptions{Ops: 8, Seed: 1, Keys: 100})
	want := goldenSeed1
	if got != want {
		t.Errorf("KV(Ops 8, Seed 1, Keys 100) =\n%s\nwant\n%s", got, want)
	}
}

func TestKVSyntaxAndMix(t *testing.T) {
	tests := []struct {
		name string
		opts KVOptions
	}{
		{"small key space", KVOptions{Ops: 20000, Seed: 3, Keys: 50}},
		{"default key space", KVOptions{Ops: 20000, Seed: 4}},
		{"another seed", KVOptions{Ops: 20000, Seed: 99, Keys: 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys := tc.opts.Keys
			if keys == 0 {
				keys = max(DefaultKeys, 4*uint64(tc.opts.Ops))
			}
			ops := parse(t, generate(t, tc.opts), keys)
			count := map[byte]int{}
			for _, o := range ops {
				count[o.op]++
			}
			n := float64(len(ops))
			for _, want := range []struct {
				op      byte
				percent int
			}{{'i', InsertPercent}, {'c', CheckPercent}, {'r', RemovePercent}} {
				got := 100 * float64(count[want.op]) / n
				if math.Abs(got-float64(want.percent)) > 2 {
					t.Errorf("%c: %.1f%% of operations, want %d%% ± 2", want.op, got, want.percent)
				}
			}
		})
	}
}

// TestKVKeyReuse checks that checks and removes name keys inserted before (at least
// ReusePercent of them, as random keys may hit too) and that most removes hit a present key.
func TestKVKeyReuse(t *testing.T) {
	tests := []KVOptions{
		{Ops: 20000, Seed: 5},
		{Ops: 20000, Seed: 6, Keys: 1 << 40},
	}
	for _, opts := range tests {
		ops := parse(t, generate(t, opts), 0)
		inserted := map[uint64]bool{}
		present := map[uint64]bool{}
		var dependent, reused, removes, hits int
		for i, o := range ops {
			switch o.op {
			case 'i':
				inserted[o.key], present[o.key] = true, true
			case 'c', 'r':
				if i > 0 && len(inserted) > 0 {
					dependent++
					if inserted[o.key] {
						reused++
					}
				}
				if o.op == 'r' {
					removes++
					if present[o.key] {
						hits++
					}
					delete(present, o.key)
				}
			}
		}
		got := 100 * float64(reused) / float64(dependent)
		if got < ReusePercent-2 {
			t.Errorf("%+v: %.1f%% of checks and removes reuse an inserted key, want ≥ %d%% - 2",
				opts, got, ReusePercent)
		}
		if hit := 100 * float64(hits) / float64(removes); hit < 50 {
			t.Errorf("%+v: only %.1f%% of removes hit a present key", opts, hit)
		}
	}
}

func TestKVErrors(t *testing.T) {
	tests := []struct {
		name string
		opts KVOptions
		want string
	}{
		{"negative ops", KVOptions{Ops: -1}, "negative operation count"},
		{"ops over the bound", KVOptions{Ops: 999999999999999}, "--ops 999999999999999: a workload has at most 1000000 operations"},
		{"ops just over the bound", KVOptions{Ops: MaxOps + 1}, "at most 1000000 operations"},
		{"unknown style", KVOptions{Ops: 1, MapStyle: "redis"}, `unknown map style "redis"`},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		err := KV(&b, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: KV(%+v) = %v, want an error containing %q", tc.name, tc.opts, err, tc.want)
		}
		if b.Len() != 0 {
			t.Errorf("%s: KV wrote %d bytes before its error", tc.name, b.Len())
		}
	}
	errWrite := errors.New("disk full")
	if err := KV(failWriter{errWrite}, KVOptions{Ops: 10000, Seed: 1}); !errors.Is(err, errWrite) {
		t.Errorf("KV to a failing writer = %v, want it to wrap %v", err, errWrite)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

const goldenSeed1 = "i 48\nc 48\ni 46\ni 17\nc 48\ni 42\nc 86\ni 49\n"
