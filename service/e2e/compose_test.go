package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// scriptDir is where the Dockerfile copies deploy/.
const scriptDir = "/usr/local/share/mcpredict/deploy/"

// TestCompose loads docker-compose.yml with the Compose specification's
// own loader (no Docker engine here) and checks that it describes the
// deployment of docs/service.md.
func TestCompose(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{filepath.Join(repo, "docker-compose.yml")},
		cli.WithWorkingDirectory(repo),
		cli.WithEnv([]string{"TRACES_DIR=/srv/traces", "REPORTS_DIR=/srv/reports", "MCPREDICT_TOKEN=t0k"}),
		cli.WithInterpolation(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	if p.Name != "mcpredict" {
		t.Errorf("project name %q", p.Name)
	}
	svc := func(name string) types.ServiceConfig {
		t.Helper()
		s, err := p.GetService(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	env := func(s types.ServiceConfig, key string) string {
		if v := s.Environment[key]; v != nil {
			return *v
		}
		return ""
	}
	tests := []struct {
		service    string
		entrypoint string // deploy script, "" for none
		check      func(t *testing.T, s types.ServiceConfig)
	}{
		{"nats", "", func(t *testing.T, s types.ServiceConfig) {
			// The configuration file is mounted from deploy/ and turns
			// JetStream on, with the volume as its store.
			if !strings.HasPrefix(s.Image, "nats:") || !slices.Equal(s.Command, []string{"--config", "/etc/nats/mcpredict.conf"}) {
				t.Errorf("nats: image %q command %v, want --config /etc/nats/mcpredict.conf", s.Image, s.Command)
			}
			conf := ""
			for _, v := range s.Volumes {
				if v.Target == "/etc/nats/mcpredict.conf" && v.ReadOnly {
					conf = v.Source
				}
			}
			b, err := os.ReadFile(conf)
			if err != nil || !strings.Contains(string(b), "jetstream") || !strings.Contains(string(b), "store_dir: /data") {
				t.Errorf("nats configuration %q: %v, want JetStream stored in /data", conf, err)
			}
		}},
		{"server", "serve.sh", func(t *testing.T, s types.ServiceConfig) {
			if s.Build == nil || s.Build.Dockerfile != "Dockerfile" {
				t.Errorf("server builds %+v, want the Dockerfile", s.Build)
			}
			if env(s, "MCPREDICT_NATS") != "nats://nats:4222" || env(s, "MCPREDICT_TOKEN") != "t0k" {
				t.Errorf("server environment %v", s.Environment)
			}
			if s.HealthCheck == nil || !strings.Contains(strings.Join(s.HealthCheck.Test, " "), "/healthz") {
				t.Errorf("server health check %+v", s.HealthCheck)
			}
			if len(s.Ports) != 1 || s.Ports[0].Target != 8080 || s.Ports[0].HostIP != "127.0.0.1" {
				t.Errorf("server ports %+v, want 8080 published on 127.0.0.1", s.Ports)
			}
		}},
		{"worker", "worker.sh", func(t *testing.T, s types.ServiceConfig) {
			// --scale worker=N needs no fixed name and no published port.
			if s.ContainerName != "" || len(s.Ports) != 0 {
				t.Errorf("worker cannot scale: container_name %q, ports %v", s.ContainerName, s.Ports)
			}
			if env(s, "MCPREDICT_NATS") != "nats://nats:4222" {
				t.Errorf("worker environment %v", s.Environment)
			}
			if _, ok := s.DependsOn["nats"]; !ok {
				t.Error("worker does not depend on nats")
			}
		}},
		{"nightly", "nightly.sh", func(t *testing.T, s types.ServiceConfig) {
			mounts := map[string]types.ServiceVolumeConfig{}
			for _, v := range s.Volumes {
				mounts[v.Target] = v
			}
			if m := mounts["/traces"]; m.Source != "/srv/traces" || !m.ReadOnly {
				t.Errorf("nightly /traces mount %+v, want /srv/traces read-only", m)
			}
			if m := mounts["/reports"]; m.Source != "/srv/reports" || m.ReadOnly {
				t.Errorf("nightly /reports mount %+v", m)
			}
			if d := s.DependsOn["server"]; d.Condition != types.ServiceConditionHealthy {
				t.Errorf("nightly starts before the server is healthy: %+v", d)
			}
			if env(s, "MCPREDICT_SERVER") != "http://server:8080" || env(s, "TRACES") != "/traces" || env(s, "REPORTS") != "/reports" {
				t.Errorf("nightly environment %v", s.Environment)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			s := svc(tt.service)
			if tt.entrypoint != "" {
				if s.Image != "mcpredict:latest" || s.Init == nil || !*s.Init {
					t.Errorf("image %q, want mcpredict:latest with init: true", s.Image)
				}
				if len(s.Entrypoint) != 1 || s.Entrypoint[0] != scriptDir+tt.entrypoint {
					t.Errorf("entrypoint %v, want %s", s.Entrypoint, scriptDir+tt.entrypoint)
				}
				// The entry script is the one CI runs.
				fi, err := os.Stat(filepath.Join(repo, "deploy", tt.entrypoint))
				if err != nil || fi.Mode()&0o111 == 0 {
					t.Errorf("deploy/%s: %v, mode %v; want an executable script", tt.entrypoint, err, fi.Mode())
				}
			}
			tt.check(t, s)
		})
	}
}

// TestComposeBind checks where the compose file publishes the API: on
// loopback by default, elsewhere with MCPREDICT_BIND, which serve.sh
// refuses without a token.
func TestComposeBind(t *testing.T) {
	for _, tt := range []struct {
		env    []string
		hostIP string
	}{
		{nil, "127.0.0.1"},
		{[]string{"MCPREDICT_BIND=0.0.0.0", "MCPREDICT_TOKEN=t0k"}, "0.0.0.0"},
	} {
		opts, err := cli.NewProjectOptions([]string{filepath.Join(repo, "docker-compose.yml")},
			cli.WithWorkingDirectory(repo), cli.WithEnv(tt.env), cli.WithInterpolation(true))
		if err != nil {
			t.Fatal(err)
		}
		p, err := opts.LoadProject(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.GetService("server")
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Ports) != 1 || s.Ports[0].HostIP != tt.hostIP || s.Ports[0].Published != "8080" {
			t.Errorf("%v: server ports %+v, want 8080 on %s", tt.env, s.Ports, tt.hostIP)
		}
		if v := s.Environment["MCPREDICT_BIND"]; v == nil || *v != tt.hostIP {
			t.Errorf("%v: serve.sh is not told MCPREDICT_BIND=%s: %v", tt.env, tt.hostIP, s.Environment)
		}
	}
	// serve.sh, with echo as mcpredict: the command line, or the refusal.
	for _, tt := range []struct {
		env  []string
		args []string
		ok   bool
	}{
		{nil, nil, true},
		{[]string{"MCPREDICT_BIND=127.0.0.1"}, nil, true},
		{[]string{"MCPREDICT_BIND=0.0.0.0"}, nil, false},
		{[]string{"MCPREDICT_BIND=0.0.0.0", "MCPREDICT_TOKEN=t0k"}, nil, true},
		{[]string{"MCPREDICT_BIND=0.0.0.0"}, []string{"--token-file", "/run/secrets/token"}, true},
	} {
		cmd := exec.Command("sh", append([]string{filepath.Join(repo, "deploy", "serve.sh")}, tt.args...)...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "MCPREDICT=echo"}, tt.env...)
		out, err := cmd.CombinedOutput()
		if ok := err == nil && strings.HasPrefix(string(out), "serve --addr"); ok != tt.ok {
			t.Errorf("serve.sh %v %v: %v\n%s", tt.env, tt.args, err, out)
		}
		if !tt.ok && !strings.Contains(string(out), "without a token") {
			t.Errorf("serve.sh %v: refused without saying why:\n%s", tt.env, out)
		}
	}
}

// TestDockerfile checks the multi-stage build: a Go build stage, then a
// slim Debian runtime with spin and gcc and the deploy scripts.
func TestDockerfile(t *testing.T) {
	f, err := os.Open(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var from []string
	var text strings.Builder
	args := map[string]string{} // ARG defaults before the first FROM
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		text.WriteString(line + "\n")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "ARG" && len(from) == 0:
			if name, def, ok := strings.Cut(fields[1], "="); ok {
				args[name] = def
			}
		case len(fields) > 1 && strings.EqualFold(fields[0], "FROM"):
			from = append(from, os.Expand(fields[1], func(k string) string { return args[k] }))
		}
	}
	// The official images by default (scripts/docker-images.sh passes
	// local stand-ins as build arguments).
	if len(from) != 2 || !strings.HasPrefix(from[0], "golang:1.26") || from[1] != "debian:bookworm-slim" {
		t.Errorf("stages %v, want golang:1.26 then debian:bookworm-slim", from)
	}
	words := strings.Fields(text.String())
	for _, pkg := range []string{"spin", "gcc", "libc6-dev"} {
		if !slices.Contains(words, pkg) {
			t.Errorf("the runtime stage does not install %s", pkg)
		}
	}
	for _, want := range []string{"COPY --from=build", "COPY deploy/ " + scriptDir, "ENTRYPOINT [\"" + scriptDir + "serve.sh\"]"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}
