package main

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// helpOf is the -h text of a command.
func helpOf(t *testing.T, cmd string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, cmd, "-h")
	if code != exitOK {
		t.Fatalf("%s -h: exit %d\n%s", cmd, code, stderr)
	}
	return stdout + stderr
}

var (
	flagLine  = regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)`)
	flagWord  = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	otherFlag = regexp.MustCompile(`mcpredict (serve|run|worker|batch)((?: --?[a-z][a-z0-9-]*(?: [A-Z]+)?)+)`)
)

// listedFlags are the flags the flag list of a help text names.
func listedFlags(help string) []string {
	var out []string
	for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestHelpListsWhatIsAccepted checks the flag vocabulary shared by run,
// batch, serve, worker and reproduce: -h lists the names each accepts,
// not the deprecated ones (which still work, see TestBatchFlagNames), and
// every flag its text mentions is one of its own or is named as another
// command's.
func TestHelpListsWhatIsAccepted(t *testing.T) {
	tests := []struct {
		cmd      string
		listed   []string
		unlisted []string
		// mentioned: flags the text names that are not the command's (the
		// server's, in worker's text, are written "mcpredict serve --flag").
		mentioned []string
	}{
		{"run", []string{"o", "format", "quiet", "q", "no-warnings", "src-root", "timeout", "memory"}, []string{"out", "out-dir", "formats"}, nil},
		{"reproduce", []string{"o", "format", "quiet", "q", "no-warnings", "out-dir", "src-root"}, []string{"out", "formats"}, nil},
		{"batch", []string{"out-dir", "formats", "format", "quiet", "q", "no-warnings", "token-file", "src-root", "timeout", "memory"}, []string{"out", "token", "o"}, nil},
		{"serve", []string{"token-file", "src-root", "timeout", "memory", "addr"}, []string{"token", "quiet"},
			[]string{"analysis"}}, // in --atomic-sets' text, shared with run: a job's option here
		{"worker", []string{"nats", "memory", "temp-dir", "max-events", "input-format"}, []string{"timeout", "quiet"},
			[]string{"embedded-nats", "shards"}}, // serve's, named as such
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			help := helpOf(t, tt.cmd)
			listed := listedFlags(help)
			for _, f := range tt.listed {
				if !slices.Contains(listed, f) {
					t.Errorf("-h does not list -%s", f)
				}
			}
			for _, f := range tt.unlisted {
				if slices.Contains(listed, f) {
					t.Errorf("-h lists -%s", f)
				}
			}
			others := map[string]bool{}
			for _, m := range otherFlag.FindAllStringSubmatch(strings.Join(strings.Fields(help), " "), -1) {
				if m[1] == tt.cmd {
					continue
				}
				for _, w := range flagWord.FindAllStringSubmatch(m[2], -1) {
					others[w[1]] = true
				}
			}
			for _, m := range flagWord.FindAllStringSubmatch(help, -1) {
				f := m[1]
				if strings.HasSuffix(f, "-") { // "the --no-* flags"
					continue
				}
				if !slices.Contains(listed, f) && !others[f] && !slices.Contains(tt.mentioned, f) {
					t.Errorf("-h mentions --%s, which %s does not accept", f, tt.cmd)
				}
			}
		})
	}
}

// TestBatchFlagNames runs batch with every name of its flags: --out-dir
// and its old name -out (a warning), --formats and --format, --quiet and
// -q (no progress lines, the summary still printed), --no-warnings.
func TestBatchFlagNames(t *testing.T) {
	trace := exampleTrace("bank")
	tests := []struct {
		name     string
		args     func(dir string) []string
		code     int
		files    []string // under the output directory
		stderr   []string // substrings of standard error
		noStderr []string // ... that it must not have
	}{
		{"--out-dir", func(d string) []string { return []string{"--out-dir", d} }, exitViolation,
			[]string{"summary.json", "summary.txt", "reports/bank.csv.json"}, []string{"bank.csv: "}, []string{"warning"}},
		{"-out, deprecated", func(d string) []string { return []string{"-out", d} }, exitViolation,
			[]string{"summary.json"}, []string{"warning: -out is deprecated: use --out-dir"}, nil},
		{"--out=DIR, deprecated", func(d string) []string { return []string{"--out=" + d} }, exitViolation,
			[]string{"summary.json"}, []string{"warning: -out is deprecated"}, nil},
		{"-out with --no-warnings", func(d string) []string { return []string{"-out", d, "--no-warnings"} }, exitViolation,
			[]string{"summary.json"}, nil, []string{"warning"}},
		{"-out and --out-dir", func(d string) []string { return []string{"-out", d, "--out-dir", d} }, exitUsage,
			nil, []string{"give only --out-dir"}, nil},
		{"--formats", func(d string) []string { return []string{"--out-dir", d, "--formats", "text,sarif"} }, exitViolation,
			[]string{"reports/bank.csv.text", "reports/bank.csv.sarif"}, nil, nil},
		{"--format", func(d string) []string { return []string{"--out-dir", d, "--format", "html"} }, exitViolation,
			[]string{"reports/bank.csv.html"}, nil, []string{"warning"}},
		{"--format unknown", func(d string) []string { return []string{"--out-dir", d, "--format", "pdf"} }, exitUsage,
			nil, []string{`unknown format "pdf"`}, nil},
		{"--quiet", func(d string) []string { return []string{"--out-dir", d, "--quiet"} }, exitViolation,
			[]string{"summary.json"}, nil, []string{"bank.csv: "}},
		{"-q", func(d string) []string { return []string{"--out-dir", d, "-q"} }, exitViolation,
			[]string{"summary.json"}, nil, []string{"bank.csv: "}},
		{"--quiet keeps warnings", func(d string) []string { return []string{"-q", "-out", d} }, exitViolation,
			[]string{"summary.json"}, []string{"warning: -out is deprecated"}, []string{"bank.csv: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"batch", "--engine", "native", "--no-cache"}, tt.args(dir)...)
			code, stdout, stderr := runCLI(t, append(args, trace)...)
			if code != tt.code {
				t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, tt.code, stdout, stderr)
			}
			for _, f := range tt.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			for _, s := range tt.noStderr {
				if strings.Contains(stderr, s) {
					t.Errorf("stderr has %q:\n%s", s, stderr)
				}
			}
			if code == exitViolation && !strings.Contains(stdout, "1 traces") {
				t.Errorf("no summary on stdout:\n%s", stdout)
			}
		})
	}
}

// TestBatchToken checks where batch --server takes its token from:
// --token-file, $MCPREDICT_TOKEN, or the old --token (which other users
// can read in ps: a warning).
func TestBatchToken(t *testing.T) {
	var (
		mu   sync.Mutex
		auth []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error": "no"}`))
	}))
	defer srv.Close()
	tokenFile := tmpFile(t, "token", "from-file\n")
	tests := []struct {
		name      string
		env       string
		args      []string
		bearer    string // "" for no request
		warning   string
		noWarning bool
	}{
		{"--token-file", "", []string{"--token-file", tokenFile}, "Bearer from-file", "", true},
		{"$MCPREDICT_TOKEN", "from-env", nil, "Bearer from-env", "", true},
		{"--token-file over $MCPREDICT_TOKEN", "from-env", []string{"--token-file", tokenFile}, "Bearer from-file", "", true},
		{"--token, deprecated", "", []string{"--token", "from-flag"}, "Bearer from-flag", "process list", false},
		{"-token=, deprecated", "", []string{"-token=from-flag"}, "Bearer from-flag", "(ps)", false},
		{"--token and --token-file", "", []string{"--token", "x", "--token-file", tokenFile}, "", "exclude each other", false},
		{"missing --token-file", "", []string{"--token-file", filepath.Join(t.TempDir(), "none")}, "", "--token-file", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MCPREDICT_TOKEN", tt.env)
			mu.Lock()
			auth = nil
			mu.Unlock()
			args := append([]string{"batch", "--server", srv.URL, "--out-dir", t.TempDir()}, tt.args...)
			code, _, stderr := runCLI(t, append(args, exampleTrace("bank"))...)
			mu.Lock()
			got := slices.Clone(auth)
			mu.Unlock()
			if tt.bearer == "" {
				if code != exitUsage || len(got) != 0 {
					t.Errorf("exit %d, %d requests; want 2 and none\n%s", code, len(got), stderr)
				}
			} else if len(got) == 0 || got[0] != tt.bearer {
				t.Errorf("Authorization %q, want %q\n%s", got, tt.bearer, stderr)
			}
			if tt.warning != "" && !strings.Contains(stderr, tt.warning) {
				t.Errorf("stderr lacks %q:\n%s", tt.warning, stderr)
			}
			if tt.noWarning && strings.Contains(stderr, "warning") {
				t.Errorf("a warning:\n%s", stderr)
			}
		})
	}
}

// TestRunQuietAndWarnings checks --quiet, -q and --no-warnings of run: the
// flags of outputFlags, which reproduce shares.
func TestRunQuietAndWarnings(t *testing.T) {
	// Thread 2 runs before the Create that starts it: a warning.
	trace := tmpFile(t, "warn.csv", "1, 1, a.c-1, Write, x\n2, 2, a.c-2, Read, x\n1, 3, a.c-3, Create, 2\n2, 4, a.c-4, Write, x\n")
	tests := []struct {
		args    []string
		warning bool
	}{
		{nil, true},
		{[]string{"--quiet"}, true},
		{[]string{"-q"}, true},
		{[]string{"--no-warnings"}, false},
		{[]string{"-q", "--no-warnings"}, false},
	}
	for _, tt := range tests {
		args := append([]string{"run", "--engine", "native", "--no-cache"}, tt.args...)
		code, stdout, stderr := runCLI(t, append(args, trace)...)
		if code == exitUsage || code == exitInternal {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if got := strings.Contains(stderr, "mcpredict run: warning: "); got != tt.warning {
			t.Errorf("%v: warning printed %v, want %v\n%s", args, got, tt.warning, stderr)
		}
		if stdout == "" {
			t.Errorf("%v: no report", args)
		}
	}
}

// TestWorkerFlags: worker accepts --memory (for items without a memory
// limit) and refuses --timeout, the server's, with the reason.
func TestWorkerFlags(t *testing.T) {
	t.Setenv("MCPREDICT_NATS", "")
	code, _, stderr := runCLI(t, "worker", "--memory", "512")
	if code != exitUsage || !strings.Contains(stderr, "want --nats URL") {
		t.Errorf("worker --memory: exit %d\n%s", code, stderr)
	}
	for _, arg := range [][]string{{"--timeout", "1m"}, {"-timeout=1m"}, {"--timeout"}} {
		code, _, stderr = runCLI(t, append([]string{"worker", "--nats", "nats://127.0.0.1:1"}, arg...)...)
		if code != exitUsage || !strings.Contains(stderr, "mcpredict serve --timeout") {
			t.Errorf("worker %v: exit %d\n%s", arg, code, stderr)
		}
	}
}

// TestTakeFlags covers the parsing of the flags kept out of -h.
func TestTakeFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("match", "", "")
	fs.Bool("quiet", false, "")
	tests := []struct {
		args  []string
		rest  []string
		taken map[string]string
		err   bool
	}{
		{[]string{"-out", "d", "a"}, []string{"a"}, map[string]string{"out": "d"}, false},
		{[]string{"a", "--out=d", "--quiet"}, []string{"a", "--quiet"}, map[string]string{"out": "d"}, false},
		{[]string{"--out", "d1", "--out", "d2"}, nil, map[string]string{"out": "d2"}, false},
		{[]string{"--match", "-out", "a"}, []string{"--match", "-out", "a"}, map[string]string{}, false},
		{[]string{"--match=x", "-out", "d"}, []string{"--match=x"}, map[string]string{"out": "d"}, false},
		{[]string{"--quiet", "-out", "d"}, []string{"--quiet"}, map[string]string{"out": "d"}, false},
		{[]string{"--", "-out", "d"}, []string{"--", "-out", "d"}, map[string]string{}, false},
		{[]string{"-", "-output", "d"}, []string{"-", "-output", "d"}, map[string]string{}, false},
		{[]string{"a", "-out"}, nil, nil, true},
	}
	for _, tt := range tests {
		rest, taken, err := takeFlags(fs, tt.args, "out")
		if (err != nil) != tt.err || !slices.Equal(rest, tt.rest) || (!tt.err && !mapsEqual(taken, tt.taken)) {
			t.Errorf("takeFlags(%q) = %q, %v, %v; want %q, %v, error %v", tt.args, rest, taken, err, tt.rest, tt.taken, tt.err)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
