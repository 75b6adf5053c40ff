package strace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scry-pm/scry/internal/testenv"
	"github.com/scry-pm/scry/trace"
)

// TestRecordCxxFrames records a C++ program (testdata/leveldb.cc) built against Debian's
// libleveldb with stacks: frames in the stripped library have the library's path as file and
// the demangled symbol and offset as function, whole (a C++ name's parentheses never split it
// across the two); frames in the program, built with -g, have its source lines.
func TestRecordCxxFrames(t *testing.T) {
	cxx := testenv.Tool(t, "clang++-14")
	testenv.Tool(t, "strace")
	if _, err := os.Stat("/usr/include/leveldb/db.h"); err != nil {
		testenv.Missing(t, "libleveldb-dev is not installed (make deps): %v", err)
	}
	src, err := filepath.Abs("testdata/leveldb.cc")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	prog := filepath.Join(tmp, "leveldb")
	if out, err := exec.Command(cxx, "-g", "-O0", "-o", prog, src, "-lleveldb").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cxx, err, out)
	}
	dir := filepath.Join(tmp, "w")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(tmp, "trace")
	res, err := Record(context.Background(), RecordOptions{Dir: dir, Args: []string{prog}, Stack: true, Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("the program %v", res)
	}
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var sites []trace.Site
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == trace.KindSites {
			sites = append(sites, ev.Sites...)
		}
	}
	libFn := regexp.MustCompile(`^leveldb::.*\+0x[0-9a-f]+$`)
	var lib, own, lambda, anon bool
	for _, s := range sites {
		if strings.Contains(s.File, "(") || strings.HasPrefix(s.Function, ")") {
			t.Errorf("site %q in %q: a symbol split across file and function", s.Function, s.File)
		}
		switch {
		case strings.HasPrefix(filepath.Base(s.File), "libleveldb.so"):
			if !filepath.IsAbs(s.File) || s.Line != 0 {
				t.Errorf("library site %q in %q:%d: want the library's path, no line", s.Function, s.File, s.Line)
			}
			if libFn.MatchString(s.Function) {
				lib = true
			}
		case s.File != "" && strings.HasSuffix(s.File, "leveldb.cc"):
			if s.Line == 0 {
				t.Errorf("program site %q in %q has no line", s.Function, s.File)
			}
			own = true
			lambda = lambda || strings.Contains(s.Function, "{lambda(int)#1}")
			anon = anon || strings.Contains(s.Function, "(anonymous namespace)::Writer::operator()(char const*)")
		}
	}
	if !lib || !own || !lambda || !anon {
		for _, s := range sites {
			t.Logf("site %d: %q %s:%d", s.ID, s.Function, s.File, s.Line)
		}
		t.Errorf("want a leveldb:: library site (%v), program sites with lines (%v), the lambda (%v) and the anonymous namespace's operator() (%v)", lib, own, lambda, anon)
	}
}
