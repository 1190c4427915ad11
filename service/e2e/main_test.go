package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
)

// bin is the mcpredict binary that TestMain builds.
var bin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "mcpredict-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "mcpredict")
		build := exec.Command("go", "build", "-o", bin, "github.com/mcpredict/mcpredict/cmd/mcpredict")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building mcpredict:", err)
			return 1
		}
		return m.Run()
	}())
}

// repo is the repository root.
const repo = "../.."

// env is the environment of the processes: the binary for the deploy
// scripts, and tcc for Spin's verifiers when it is installed (it compiles
// them much faster than gcc; the verdicts and trails are the same).
func env(extra ...string) []string {
	e := append(os.Environ(), "MCPREDICT="+bin)
	if _, err := exec.LookPath("tcc"); err == nil && os.Getenv("MCPREDICT_CC") == "" {
		e = append(e, "MCPREDICT_CC=tcc")
	}
	return append(e, extra...)
}

func needSpin(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"spin", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (make setup installs it)", tool)
		}
	}
}

// proc is a running process with its combined output.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start starts a process; it is stopped at the end of the test, and its
// output is logged if the test failed.
func start(t *testing.T, name string, environ []string, argv ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Env = environ
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- output of %s:\n%s", p.name, p.output())
		}
	})
	return p
}

// stop ends the process gracefully, then forcefully.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// kill9 kills the process with SIGKILL and waits for it.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// waitOutput waits until the output matches re and returns the submatches.
func (p *proc) waitOutput(t *testing.T, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before printing %q:\n%s", p.name, p.err, re, p.output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q in %s:\n%s", p.name, re, d, p.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	listenRE = regexp.MustCompile(`listening on (http://[0-9.:]+)`)
	natsRE   = regexp.MustCompile(`embedded NATS at (nats://[0-9.]+:([0-9]+))`)
)

// server is a running `mcpredict serve`.
type server struct {
	*proc
	url  string // HTTP
	nats string // embedded NATS, if started
}

// startServer starts deploy/serve.sh with data under dataDir.
func startServer(t *testing.T, dataDir string, extraEnv []string, args ...string) *server {
	t.Helper()
	e := env(append([]string{"MCPREDICT_ADDR=127.0.0.1:0", "MCPREDICT_DATA=" + dataDir}, extraEnv...)...)
	// No verdict cache: the tests must check every model, and must not
	// write into the user's cache directory.
	p := start(t, "server", e, append([]string{filepath.Join(repo, "deploy", "serve.sh"), "--no-cache"}, args...)...)
	s := &server{proc: p}
	for _, a := range args {
		if a == "--embedded-nats" {
			s.nats = p.waitOutput(t, natsRE, 30*time.Second)[1]
		}
	}
	s.url = p.waitOutput(t, listenRE, 30*time.Second)[1]
	return s
}

// startWorker starts deploy/worker.sh.
func startWorker(t *testing.T, name, natsURL string, args ...string) *proc {
	t.Helper()
	p := start(t, name, env("MCPREDICT_NATS="+natsURL), append([]string{filepath.Join(repo, "deploy", "worker.sh"), "--name", name, "--no-cache"}, args...)...)
	p.waitOutput(t, regexp.MustCompile(`worker ready`), 30*time.Second)
	return p
}

// runReport is the JSON report of `mcpredict run` on a trace.
func runReport(t *testing.T, trace string, args ...string) *bugs.Report {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"run", "--no-cache", "--format", "json"}, args...), trace)...)
	cmd.Env = env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			t.Fatalf("mcpredict run %s: %v\n%s", trace, err, errb.String())
		}
	}
	rep, err := bugs.ReadJSON(&out, trace)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// sameReport compares bugs, violations, trace and statistics other than
// the elapsed time.
func sameReport(t *testing.T, what string, got, want *bugs.Report) {
	t.Helper()
	g, w := *got, *want
	// Costs differ between runs (time, verdict cache hits and so the
	// models that needed Spin); what was found must not.
	for _, r := range []*bugs.Report{&g, &w} {
		r.Stats.Elapsed, r.Stats.CacheHits, r.Stats.SpinModels = 0, 0, 0
	}
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if !bytes.Equal(gj, wj) {
		t.Errorf("%s: report differs from mcpredict run:\n got %s\nwant %s", what, gj, wj)
	}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
}
