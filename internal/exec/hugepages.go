package exec

import (
	"debug/elf"
	"os"
	"strings"
)

// Huge pages for the heap of the runs.
//
// A run on a crash image is a fresh process (forked from a fork server before main): every page
// of heap it writes is a page fault, and its exit frees them all. A program that allocates much
// when it opens its pool pays that per run: libpmemobj's pmemobj_open allocates about 10 MiB of
// run-time state (a lock per chunk of the heap, three operation contexts per lane: 1 024 lanes),
// some 3 000 page faults, most of a mapcli run on a 2 000-operation workload. glibc's malloc can
// back its heap with transparent huge pages instead (the tunable glibc.malloc.hugetlb=1:
// madvise(MADV_HUGEPAGE) on the memory it obtains), which turns those faults into a few. For a
// program whose heap is small it costs more than it saves (zeroing a 2 MiB page per run), so
// pm/explore sets it for programs that link libpmemobj only; docs/performance.md has both.

// hugeTunable is the glibc tunable that puts malloc's memory on transparent huge pages.
const hugeTunable = "glibc.malloc.hugetlb=1"

// LinksLibrary reports whether the ELF executable at path needs a shared library whose name
// starts with prefix (its DT_NEEDED entries, e.g. "libpmemobj.so"); false for anything else (a
// script, a missing file).
func LinksLibrary(path, prefix string) bool {
	ef, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer ef.Close()
	libs, err := ef.ImportedLibraries()
	if err != nil {
		return false
	}
	for _, l := range libs {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// WithHugePages returns env (a target's NAME=VALUE assignments, which come after the inherited
// environment) with GLIBC_TUNABLES set so that glibc's malloc uses transparent huge pages: the
// tunable is appended to the value env sets, else to the inherited one, unless that value sets
// glibc.malloc.hugetlb already (the user's choice stands).
func WithHugePages(env []string) []string {
	const name = "GLIBC_TUNABLES="
	cur, set := os.Getenv("GLIBC_TUNABLES"), false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name); ok {
			cur, set = v, true
		}
	}
	if strings.Contains(cur, "glibc.malloc.hugetlb=") {
		return env
	}
	v := hugeTunable
	if cur != "" {
		v = cur + ":" + hugeTunable
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !set || !strings.HasPrefix(kv, name) {
			out = append(out, kv)
		}
	}
	return append(out, name+v)
}
