//go:build docker

// The Docker nightly, run for real (make docker-test): it needs a running
// Docker engine and Compose v2, which `make setup` installs and starts
// (scripts/docker-setup.sh). Without them the test fails with the reason;
// it never skips.

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/service/batch"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/service/store"
)

// compose runs docker compose on one project: the repository's compose file
// with deploy/compose.host.yml, so that every service is on the host's
// network and talks over loopback.
type compose struct {
	project string
	envFile string // the images' names (scripts/docker-images.sh)
	env     []string
}

func (c *compose) cmd(ctx context.Context, args ...string) *exec.Cmd {
	base := []string{"compose", "-p", c.project, "--env-file", c.envFile,
		"-f", filepath.Join(repo, "docker-compose.yml"),
		"-f", filepath.Join(repo, "deploy", "compose.host.yml")}
	cmd := exec.CommandContext(ctx, "docker", append(base, args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	return cmd
}

// run runs docker compose and fails the test on an error, with the output.
func (c *compose) run(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := c.cmd(ctx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDockerNightly builds the images, starts the compose deployment (NATS,
// the server, two workers, the nightly scheduler), and runs two nights:
//
//  1. the scheduler's own run at start (NIGHTLY_AT_START=1) over three
//     traces: every trace's report lands in REPORTS_DIR;
//  2. `nightly.sh --once` in the scheduler's container, after one trace was
//     fixed and one added, with one worker killed (docker kill) in the
//     middle of the job of a third, unchanged trace: the night reports the
//     fixed and new bugs, and the unchanged trace's bugs are those of the
//     first night and of `mcpredict run` on the host.
//
// Then a worker whose process crashes is restarted (restart policy), and
// `docker compose down -v` must leave no container, volume or network.
func TestDockerNightly(t *testing.T) {
	ctx := ctxT(t, 25*time.Minute)
	begin := time.Now()
	phase := func(what string, since time.Time) { t.Logf("%-34s %6.1fs", what, time.Since(since).Seconds()) }
	if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Fatalf("no Docker engine: docker info: %v\n%s\n(make setup starts dockerd as root: scripts/docker-setup.sh)", err, out)
	}
	if out, err := exec.CommandContext(ctx, "docker", "compose", "version").CombinedOutput(); err != nil {
		t.Fatalf("no Compose v2: docker compose version: %v\n%s\n(make setup installs it: scripts/docker-setup.sh)", err, out)
	}

	// Local stand-ins for the official images: this machine reaches no
	// container registry.
	start := time.Now()
	imagesEnv := filepath.Join(t.TempDir(), "images.env")
	images := exec.CommandContext(ctx, filepath.Join(repo, "scripts", "docker-images.sh"), "--env", imagesEnv)
	if out, err := images.CombinedOutput(); err != nil {
		t.Fatalf("scripts/docker-images.sh: %v\n%s", err, out)
	}
	phase("base images", start)

	traces, reports := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join(repo, "examples", "bank.csv"), filepath.Join(traces, "bank.csv"))
	copyFile(t, filepath.Join(repo, "examples", "condvar-handoff.csv"), filepath.Join(traces, "condvar-handoff.csv"))
	// A trace whose job lasts long enough to kill a worker in its middle:
	// every model goes through Spin (NIGHTLY_FLAGS below).
	server := filepath.Join(traces, "server.csv")
	if out, err := exec.CommandContext(ctx, bin, "gen", "--kind", "server", "--threads", "4", "--events", "10000", "--bugs", "2", "-o", server).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	port, natsPort := freePort(t), freePort(t)
	c := &compose{
		project: fmt.Sprintf("mcpredict-test-%d", os.Getpid()),
		envFile: imagesEnv,
		env: []string{
			"MCPREDICT_IMAGE=mcpredict-test:latest",
			"MCPREDICT_PORT=" + port, "NATS_PORT=" + natsPort,
			"TRACES_DIR=" + traces, "REPORTS_DIR=" + reports,
			"NIGHTLY_AT_START=1", "NIGHTLY_FLAGS=--engine spin",
			"MCPREDICT_ACK_WAIT=5s",
		},
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if t.Failed() {
			out, _ := c.cmd(ctx, "logs", "--no-color", "--tail", "60").CombinedOutput()
			t.Logf("logs:\n%s", out)
		}
		c.cmd(ctx, "down", "-v", "--remove-orphans", "--timeout", "5").Run()
		// The images that earlier runs' builds left without a name (each
		// run rebuilds when the sources changed): 500 MB each.
		exec.CommandContext(ctx, "docker", "image", "prune", "-f", "--filter", "label=com.docker.compose.service=server").Run()
	})

	start = time.Now()
	c.run(t, ctx, "build")
	phase("docker compose build", start)

	start = time.Now()
	c.run(t, ctx, "up", "-d", "--wait", "--wait-timeout", "180", "--scale", "worker=2", "nats", "server", "worker")
	phase("up: nats, server, 2 workers", start)
	api := &client.Client{Base: "http://127.0.0.1:" + port}
	if h, err := api.Health(ctx); err != nil || h.Status != "ok" || h.Executor != "nats" {
		t.Fatalf("server health %+v, %v: want ok with NATS workers", h, err)
	}

	// Night 1: the scheduler runs once as it starts.
	start = time.Now()
	c.run(t, ctx, "up", "-d", "nightly")
	night1 := waitNight(t, ctx, reports, "")
	phase("night 1 (scheduler at start)", start)
	sum1 := readNight(t, night1)
	for _, name := range []string{"bank.csv", "condvar-handoff.csv", "server.csv"} {
		tr := traceOf(t, sum1, name)
		if tr.Status != batch.StatusViolations && tr.Status != batch.StatusOK {
			t.Errorf("night 1: %s: status %q (%s)", name, tr.Status, tr.Error)
		}
		for _, ext := range []string{".json", ".text"} {
			if _, err := os.Stat(filepath.Join(night1, "reports", name+ext)); err != nil {
				t.Errorf("night 1: no report: %v", err)
			}
		}
	}
	if len(traceOf(t, sum1, "bank.csv").BugIDs) == 0 || len(traceOf(t, sum1, "server.csv").BugIDs) == 0 {
		t.Fatalf("night 1: bank.csv and server.csv should have bugs: %+v", sum1.Traces)
	}

	// Night 2: bank.csv fixed (one critical section per deposit), fig5.csv
	// added; server.csv unchanged.
	writeFixedBank(t, filepath.Join(repo, "examples", "bank.csv"), filepath.Join(traces, "bank.csv"))
	copyFile(t, filepath.Join(repo, "examples", "fig5.csv"), filepath.Join(traces, "fig5.csv"))
	start = time.Now()
	once := c.cmd(ctx, "exec", "-T", "nightly", "/usr/local/share/mcpredict/deploy/nightly.sh", "--once")
	var onceOut bytes.Buffer
	once.Stdout, once.Stderr = &onceOut, &onceOut
	if err := once.Start(); err != nil {
		t.Fatal(err)
	}
	onceDone := make(chan error, 1)
	go func() { onceDone <- once.Wait() }()

	// Kill a worker while server.csv's job is half done.
	killed := ""
	for killed == "" {
		select {
		case err := <-onceDone:
			t.Fatalf("night 2 ended (%v) before a worker could be killed mid-job:\n%s", err, onceOut.String())
		case <-ctx.Done():
			t.Fatal("timed out waiting for server.csv's job to run")
		case <-time.After(100 * time.Millisecond):
		}
		jobs, err := api.Jobs(ctx, 0, store.Running)
		if err != nil {
			continue
		}
		for _, j := range jobs {
			if strings.HasSuffix(j.Name, "server.csv") && j.Done >= 2 && j.Done < j.Total-2 {
				ids := strings.Fields(c.run(t, ctx, "ps", "-q", "worker"))
				if len(ids) != 2 {
					t.Fatalf("%d worker containers, want 2", len(ids))
				}
				if out, err := exec.CommandContext(ctx, "docker", "kill", ids[0]).CombinedOutput(); err != nil {
					t.Fatalf("docker kill: %v\n%s", err, out)
				}
				killed = ids[0]
				t.Logf("killed worker %.12s at model %d of %d of server.csv's job", killed, j.Done, j.Total)
				break
			}
		}
	}
	err := <-onceDone
	phase("night 2 (nightly.sh --once)", start)
	if out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Status}}, restarted {{.RestartCount}} times", killed).CombinedOutput(); err == nil {
		t.Logf("the killed worker is now %s", strings.TrimSpace(string(out)))
	}
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if status != 1 {
		t.Errorf("night 2: exit status %d, want 1 (new bugs):\n%s", status, onceOut.String())
	}
	night2 := waitNight(t, ctx, reports, night1)
	sum2 := readNight(t, night2)
	cmp := sum2.Compare
	if cmp == nil {
		t.Fatalf("night 2 is not compared with night 1: %+v", sum2)
	}
	if filepath.Base(cmp.Previous) != filepath.Base(night1) {
		t.Errorf("night 2 compared with %s, want %s", cmp.Previous, filepath.Base(night1))
	}
	changed := func(list []batch.BugChange) map[string][]string {
		m := map[string][]string{}
		for _, b := range list {
			m[b.Trace] = append(m[b.Trace], b.ID)
		}
		for _, ids := range m {
			slices.Sort(ids)
		}
		return m
	}
	sorted := func(ids []string) []string { return slices.Sorted(slices.Values(ids)) }
	fixed, added := changed(cmp.Fixed), changed(cmp.New)
	if got, want := fixed["bank.csv"], sorted(traceOf(t, sum1, "bank.csv").BugIDs); !slices.Equal(got, want) {
		t.Errorf("night 2: fixed in bank.csv %v, want night 1's bugs %v", got, want)
	}
	if got, want := added["fig5.csv"], sorted(traceOf(t, sum2, "fig5.csv").BugIDs); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("night 2: new in fig5.csv %v, want its bugs %v", got, want)
	}
	if len(fixed) != 1 || len(added) != 1 || !slices.Contains(cmp.NewTraces, "fig5.csv") {
		t.Errorf("night 2: fixed %v, new %v, new traces %v: want only bank.csv's fixed and fig5.csv's new", fixed, added, cmp.NewTraces)
	}
	text, err := os.ReadFile(filepath.Join(night2, "summary.txt"))
	if err != nil || !strings.Contains(string(text), "fixed") || !strings.Contains(string(text), "new") {
		t.Errorf("night 2 summary.txt does not say what is new and fixed (%v):\n%s", err, text)
	}
	// The job a worker died in completed with the same bugs as night 1 and
	// as `mcpredict run` here.
	s1, s2 := sorted(traceOf(t, sum1, "server.csv").BugIDs), sorted(traceOf(t, sum2, "server.csv").BugIDs)
	var here []string
	for _, b := range runReport(t, server, "--engine", "native").Bugs {
		here = append(here, b.ID)
	}
	if !slices.Equal(s1, s2) || !slices.Equal(s2, sorted(here)) {
		t.Errorf("server.csv: night 1 %v, night 2 (worker killed) %v, mcpredict run %v: want the same bugs", s1, s2, sorted(here))
	}

	// A worker that crashes (its process killed inside the container, not
	// `docker kill`, which Docker counts as a manual stop) is restarted by
	// its restart policy.
	crash := ""
	for _, id := range strings.Fields(c.run(t, ctx, "ps", "-q", "worker")) {
		if id != killed && !strings.HasPrefix(killed, id) {
			crash = id
		}
	}
	if crash == "" {
		t.Fatal("no running worker left after the docker kill")
	}
	if out, err := exec.CommandContext(ctx, "docker", "exec", crash, "sh", "-c", "kill -9 -1").CombinedOutput(); err != nil {
		t.Logf("docker exec kill -9 -1: %v %s", err, out) // the exec dies with the container
	}
	start = time.Now()
	for {
		out, _ := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Running}} {{.RestartCount}}", crash).CombinedOutput()
		if f := strings.Fields(string(out)); len(f) == 2 && f[0] == "true" && f[1] != "0" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the crashed worker was not restarted: %s", out)
		case <-time.After(200 * time.Millisecond):
		}
	}
	phase("crashed worker restarted", start)

	// Down: nothing of the project is left.
	start = time.Now()
	c.run(t, ctx, "down", "-v", "--timeout", "5")
	phase("down -v", start)
	label := "label=com.docker.compose.project=" + c.project
	for _, what := range [][]string{{"ps", "-a", "-q", "--filter", label}, {"volume", "ls", "-q", "--filter", label}, {"network", "ls", "-q", "--filter", label}} {
		out, err := exec.CommandContext(ctx, "docker", what...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("after down -v, docker %s: %q (%v)", strings.Join(what, " "), out, err)
		}
	}
	phase("total", begin)
}

// waitNight waits for REPORTS/latest to point to a finished night other
// than prev, and returns its directory.
func waitNight(t *testing.T, ctx context.Context, reports, prev string) string {
	t.Helper()
	for {
		if target, err := os.Readlink(filepath.Join(reports, "latest")); err == nil {
			dir := filepath.Join(reports, target)
			if dir != prev {
				if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
					return dir
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no night finished in %s", reports)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func readNight(t *testing.T, dir string) *batch.Summary {
	t.Helper()
	s, err := batch.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func traceOf(t *testing.T, s *batch.Summary, name string) batch.Trace {
	t.Helper()
	for _, tr := range s.Traces {
		if tr.Key == name || filepath.Base(tr.Path) == name {
			return tr
		}
	}
	b, _ := json.Marshal(s.Traces)
	t.Fatalf("no trace %s in the night's summary: %s", name, b)
	return batch.Trace{}
}

// writeFixedBank writes bank.csv with each deposit made one critical
// section: the Unlock after the read and the Lock before the write are gone.
func writeFixedBank(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "bank.c-12, Unlock") || strings.Contains(line, "bank.c-14, Lock") {
			continue
		}
		out = append(out, line)
	}
	if err := os.WriteFile(to, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
