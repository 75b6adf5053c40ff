package fuzz

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Read-back. A crash that loses data shows only when something reads the data back afterwards
// (WITCHER, SOSP'21, §4.1: its workloads interleave queries with the updates, so that the
// output of a crash image's run can differ from the legal outcomes'). The search keeps workloads
// for their PM coverage, which reads do not add to, so its best workload often holds only
// updates; a crash exploration on it re-executes nothing that would print a lost key. ReadBack
// gives the reads to append to it: one read of each key it writes, in the program's own command
// language.

// ReadBack returns the read operations to append to workload w (nil: none to add).
type ReadBack func(w []string) []string

// MaxReadBack bounds the reads appended to a workload.
const MaxReadBack = 256

// KVReadBack is the read-back of the key-value form (mapcli's language, KVOps): `c K` for each
// distinct key of the workload's `i K`, `n K` and `r K` lines (a removed key read back shows a
// remove that a crash undid), in the order the keys first appear.
func KVReadBack(w []string) []string {
	var keys []string
	seen := map[string]bool{}
	for _, l := range w {
		f := strings.Fields(l)
		if len(f) < 2 || (f[0] != "i" && f[0] != "n" && f[0] != "r") || seen[f[1]] {
			continue
		}
		if _, err := strconv.ParseUint(f[1], 10, 64); err != nil {
			continue
		}
		seen[f[1]] = true
		keys = append(keys, "c "+f[1])
		if len(keys) == MaxReadBack {
			break
		}
	}
	return keys
}

// readVerbs are the first words of a read command in the drivers' languages: mapcli's check,
// WITCHER's get (`g;KEY;`), and the usual lookup names.
var readVerbs = []string{"c", "g", "get", "check", "s", "search", "find", "lookup", "q", "query", "read"}

// verb is a line's first word: up to the first blank, semicolon or comma.
var verb = regexp.MustCompile(`^\s*([A-Za-z_]+)`)

// TemplateReadBack returns the read-back of the template form (TemplateOps): when one of the
// seed lines is a read (its first word a read verb, with a number, such as WITCHER's `g;KEY;`
// or `get 12`), a copy of it with its first number replaced by each distinct key the workload
// writes (the first number of each line that is no read), in the order the keys first appear;
// nil when no seed line is a read (the search's workload is then written as it is).
func TemplateReadBack(seeds []string) ReadBack {
	var read string
	for _, l := range seeds {
		m := verb.FindStringSubmatch(l)
		if m != nil && slices.Contains(readVerbs, strings.ToLower(m[1])) && number.MatchString(l) {
			read = l
			break
		}
	}
	if read == "" {
		return nil
	}
	readVerb := strings.ToLower(verb.FindStringSubmatch(read)[1])
	return func(w []string) []string {
		var out []string
		seen := map[string]bool{}
		for _, l := range w {
			m := verb.FindStringSubmatch(l)
			if m != nil && strings.ToLower(m[1]) == readVerb {
				continue
			}
			k := number.FindString(l)
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			v, err := strconv.ParseUint(k, 10, 64)
			if err != nil {
				continue
			}
			out = append(out, replaceFirstNumber(read, v))
			if len(out) == MaxReadBack {
				break
			}
		}
		return out
	}
}
