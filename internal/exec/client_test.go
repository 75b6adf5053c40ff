package exec

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverModeVar makes the test binary a server (testServer) instead of running the tests: a
// variable without the SCRY_ prefix, which runs strip.
const serverModeVar = "EXEC_TEST_SERVER"

// testServer is a line server on 127.0.0.1:port that writes its process ID into pidFile and
// answers each line L with "got L", one connection at a time. mode: "echo"; "crash" (killed by
// SIGABRT on the line "boom"); "exit" (exits 3 before listening); "silent" (never listens); "deaf" (ignores
// SIGTERM).
func testServer(mode, pidFile, port string) int {
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return 2
	}
	switch mode {
	case "exit":
		return 3
	case "silent":
		time.Sleep(time.Hour)
	case "deaf":
		signal.Ignore(syscall.SIGTERM)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return 2
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return 2
		}
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			if mode == "crash" && sc.Text() == "boom" {
				debug.SetTraceback("crash") // the panic kills the process with SIGABRT
				panic("boom")
			}
			fmt.Fprintf(c, "got %s\n", sc.Text())
		}
		c.Close()
	}
}

// lineClient is a client command for testServer: each line of standard input sent, each answer
// printed.
const lineClient = `bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 || exit 1; while IFS= read -r l; do printf "%s\n" "$l" >&3; IFS= read -r a <&3 || exit 1; printf "%s\n" "$a"; done' {port}`

func TestRunServed(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, mode, stdin string
		timeout           time.Duration
		check             func(t *testing.T, o Outcome)
	}{
		{"answers", "echo", "a\nb\n", 0, func(t *testing.T, o Outcome) {
			if o.Failed() || string(o.Stdout) != "got a\ngot b\n" {
				t.Errorf("outcome %+v (%s), stdout %q; want a success printing both answers", o, o.Describe(), o.Stdout)
			}
		}},
		{"server crashes", "crash", "a\nboom\nc\n", 0, func(t *testing.T, o Outcome) {
			if o.Signal != syscall.SIGABRT || string(o.Stdout) != "got a\n" {
				t.Errorf("outcome %s, stdout %q; want the server's SIGABRT after one answer", o.Describe(), o.Stdout)
			}
		}},
		{"server exits before listening", "exit", "a\n", 0, func(t *testing.T, o Outcome) {
			if o.ExitCode != 3 || o.Err != nil {
				t.Errorf("outcome %s; want the server's exit status 3", o.Describe())
			}
		}},
		{"server never listens", "silent", "a\n", time.Second, func(t *testing.T, o Outcome) {
			if !o.TimedOut {
				t.Errorf("outcome %s; want a hang", o.Describe())
			}
		}},
		{"server ignores SIGTERM", "deaf", "a\n", 0, func(t *testing.T, o Outcome) {
			if o.Failed() || string(o.Stdout) != "got a\n" || o.Duration < ServerGrace {
				t.Errorf("outcome %s in %v, stdout %q; want a success once the server was killed", o.Describe(), o.Duration, o.Stdout)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := dir + "/pid"
			c, err := ParseClient(lineClient)
			if err != nil {
				t.Fatal(err)
			}
			tg := Target{Args: []string{self, PoolPlaceholder, PortPlaceholder}, Env: []string{serverModeVar + "=" + tc.mode}, Timeout: tc.timeout, Client: c}
			o := tg.Run(context.Background(), pidFile, []byte(tc.stdin), dir)
			tc.check(t, o)
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("the server did not start: %v", err)
			}
			if err := syscall.Kill(atoi(t, string(b)), 0); err == nil {
				t.Errorf("the server (pid %s) is still running after the session", b)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestListeningAndFreePort(t *testing.T) {
	p1, rel1, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	defer rel1()
	p2, rel2, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	defer rel2()
	if p1 == p2 {
		t.Errorf("two sessions got the same port %d", p1)
	}
	if Listening(p1) {
		t.Errorf("port %d listens before anything listens on it", p1)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p1))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !Listening(p1) {
		t.Errorf("port %d does not listen, read from /proc/net/tcp", p1)
	}
	exited := make(chan struct{})
	close(exited)
	if err := WaitListening(context.Background(), p2, exited); err != ErrServerExited {
		t.Errorf("WaitListening on a port nothing listens on, server gone: %v, want ErrServerExited", err)
	}
}

func TestParseClient(t *testing.T) {
	for _, tc := range []struct {
		cmd, want string
	}{
		{"", "empty command"},
		{"  ", "empty command"},
		{"./client 127.0.0.1", "no {port}"},
		{"./client {port}", ""},
	} {
		_, err := ParseClient(tc.cmd)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ParseClient(%q) = %v, want %q", tc.cmd, err, tc.want)
		}
	}
}

func TestListensOn(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2CEB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
`
	for _, tc := range []struct {
		port int
		want bool
	}{{0x2CEB, true}, {0x1F90, false}, {80, false}} {
		if got := listensOn(strings.NewReader(table), tc.port); got != tc.want {
			t.Errorf("port %d: listens %v, want %v", tc.port, got, tc.want)
		}
	}
}

// FuzzListensOn: any table is read without a panic, and a LISTEN line written for the port is
// found whatever precedes it.
func FuzzListensOn(f *testing.F) {
	f.Add("   0: 0100007F:2CEB 00000000:0000 0A 0\n", 11499)
	f.Add("garbage\n:::: 0A\n", 0)
	f.Fuzz(func(t *testing.T, table string, port int) {
		listensOn(strings.NewReader(table), port)
		if port < 0 || port > 65535 || len(table) > 4096 {
			return
		}
		line := fmt.Sprintf("\n 9: 00000000:%04X 00000000:0000 0A\n", port)
		if !listensOn(strings.NewReader(table+line), port) {
			t.Errorf("the LISTEN line of port %d after %q is not found", port, table)
		}
	})
}
