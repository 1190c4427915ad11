package docsample

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the output of every sample that differs, in the Markdown files")

// outputLike are the marks of mcpredict's output: a fenced block with one
// of them on a line must be a sample or be excluded below.
var outputLike = []*regexp.Regexp{
	regexp.MustCompile(`^\$ `),                         // a shell prompt
	regexp.MustCompile(`^mcpredict(?: [a-z-]+)?: `),    // a message: "mcpredict run: warning: ..."
	regexp.MustCompile(`\bAV-[0-9a-f]{12}\b`),          // a bug id
	regexp.MustCompile(`predicted from \d+ violation`), // the text report's summary
	regexp.MustCompile(`no atomicity violation predicted`),
	regexp.MustCompile(`\d+ events, \d+ threads?, `),      // the text report's statistics
	regexp.MustCompile(`"schema": "mcpredict\.`),          // a JSON report or diff
	regexp.MustCompile(`^(new|fixed|unchanged) \(\d+\):`), // mcpredict diff
}

// excluded are the blocks that show a program's output but are no
// samples: file, a text of the block that identifies it, and why.
var excluded = []struct{ file, text, why string }{
	{"README.md", "mcpredict run: warning: trace.csv:1234:",
		"the form of a warning, for a made-up trace (tracemodel/oddity_test.go checks the messages)"},
	{"docs/recorder.md", "# program: ./bank 2 20000",
		"an excerpt of a recorded trace: its interleaving is the run's schedule"},
	{"docs/recorder.md", "mcpredict record: warning: thread 3 (monitor) was still running",
		"needs a recorded program that ends while a thread runs: the schedule decides the message (recorder/fidelity_test.go checks it)"},
	{"docs/recorder.md", "mcpredict record: WARNING: EVENTS LOST",
		"needs a program that switches user, run as root (recorder/switchuser_test.go checks it)"},
	{"examples/cmake/README.md", "P3 lost update on svc::g_cache.entries_[0].value",
		"a report of a program built by CMake, its call chains cut (recorder/buildsys_test.go TestCMake builds it and checks the bug)"},
	{"examples/cmake/README.md", "stderr: cache_demo: 10 hits of 20 lost",
		"two lines of mcpredict reproduce on a program built by CMake: the directed runs' timing decides which run fails"},
	{"docs/service.md", `"status": "unavailable"`,
		"a /healthz answer of a server in trouble (NATS and SQLite failing)"},
	{"docs/service.md", `"id": "5c8b6da96e0286da"`,
		"a job of the HTTP API: its id and times are new on every run"},
	{"docs/service.md", "P4 dirty (intermediate) read on g at restore.c:25 [failed]",
		"a job of mcpredict submit --wait: its id is new on every run (cmd/mcpredict/serve_test.go TestServeReproduce checks the output)"},
	{"docs/recorder.md", "P3 lost update on svc::g_cache.map_ (std::unordered_map internals",
		"a report of a C++ program, cut (recorder/library_test.go TestLibraryAttribution builds and reproduces it and checks its lines, library sites and container)"},
	{"examples/autotools/README.md", "thread 2 (local)",
		"a report of mcpredict run on a project built by autotools (recorder/autotools_test.go TestAutotools builds it and checks the bug)"},
	{"examples/autotools/README.md", "FAILED in a directed run (1 run), pattern observed",
		"a report of mcpredict reproduce on a project built by autotools, cut (recorder/autotools_test.go TestAutotools checks the failed bug)"},
}

// repoRoot is the repository root: two directories up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

// A markdownFile is a Markdown file of the repository and its blocks.
type markdownFile struct {
	name    string // slash-separated, relative to the repository root
	data    []byte
	blocks  []*Block
	samples []*Sample
}

// markdownFiles returns the repository's Markdown files, but for those
// under bin, node_modules and hidden directories.
func markdownFiles(t *testing.T, root string) []*markdownFile {
	t.Helper()
	var files []*markdownFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f := &markdownFile{name: filepath.ToSlash(rel), data: data}
		f.blocks, f.samples, err = Parse(f.name, data)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEveryOutputIsASample checks that every block that looks like
// mcpredict's output is a sample or excluded, and that every exclusion
// still names one block that is not a sample.
func TestEveryOutputIsASample(t *testing.T) {
	files := markdownFiles(t, repoRoot(t))
	sampled := map[*Block]bool{}
	for _, f := range files {
		for _, s := range f.samples {
			sampled[s.Block] = true
		}
	}
	used := make([]int, len(excluded))
	for _, f := range files {
	blocks:
		for _, b := range f.blocks {
			text := strings.Join(b.Lines, "\n")
			for k, e := range excluded {
				if e.file == f.name && strings.Contains(text, e.text) {
					used[k]++
					if sampled[b] {
						t.Errorf("%s:%d: the block is a sample and excluded (%q): remove the exclusion", f.name, b.Line, e.text)
					}
					continue blocks
				}
			}
			if sampled[b] {
				continue
			}
			for k, l := range b.Lines {
				for _, re := range outputLike {
					if re.MatchString(l) {
						t.Errorf("%s:%d: looks like mcpredict's output (%q) but is no sample: start it with \"$ COMMAND\", put <!-- sample: COMMAND --> above it, or exclude it in %s with the reason",
							f.name, b.contentLine(k), l, "docsample_test.go")
						continue blocks
					}
				}
			}
		}
	}
	for k, e := range excluded {
		if used[k] != 1 {
			t.Errorf("exclusion %s %q matches %d blocks, want 1", e.file, e.text, used[k])
		}
	}
}

// TestSamples runs every sample's commands and compares their output with
// the document's; with -update it rewrites the outputs that differ.
func TestSamples(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	requireSpin(t)
	bin := build(t, root)
	work := scratchRoot(t, root, bin)
	for _, f := range files {
		var reps []Replacement
		for _, s := range f.samples {
			name := fmt.Sprintf("%s:%d", f.name, s.Commands[0].Line)
			t.Run(name, func(t *testing.T) {
				reps = append(reps, check(t, s, work, bin)...)
			})
		}
		if *update && len(reps) > 0 {
			path := filepath.Join(root, filepath.FromSlash(f.name))
			if err := os.WriteFile(path, Rewrite(f.data, reps), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: rewrote %d sample outputs", f.name, len(reps))
		}
	}
}

// check runs a sample and reports how it differs from the document; with
// -update it returns the new outputs instead.
func check(t *testing.T, s *Sample, work, bin string) []Replacement {
	outs, err := runSample(t, s, work, bin)
	if err != nil {
		t.Fatalf("%s:%d: sample %q: %v", s.Block.File, s.Commands[0].Line, s.Commands[0].Text, err)
	}
	var reps []Replacement
	for i, c := range s.Commands {
		if s.Abridged {
			if ok, line := MatchAbridged(c.Output, c.first+1, outs[i]); !ok {
				t.Errorf("%s:%d: abridged sample %q differs from line %d on (edit it by hand; -update does not); the output is:\n%s",
					s.Block.File, c.Line, c.Text, line, Normalize(outs[i]))
			}
			continue
		}
		want, got := Normalize(strings.Join(c.Output, "\n")), Normalize(outs[i])
		if want == got {
			continue
		}
		if *update {
			reps = append(reps, Replacement{Command: c, Indent: s.Block.Indent, Output: OutputLines(outs[i])})
			continue
		}
		t.Errorf("%s:%d: sample %q differs:\n%s(- document, + output; go test ./internal/docsample -update rewrites it)",
			s.Block.File, c.Line, c.Text, Diff(want, got))
	}
	return reps
}

// endMark ends each command's output in the shell's output.
const endMark = "@@docsample: end of command@@"

// runSample runs the commands of a sample in one sh, in work, with a new
// verdict cache, and returns each command's output.
func runSample(t *testing.T, s *Sample, work, bin string) ([]string, error) {
	var script strings.Builder
	for _, c := range s.Commands {
		// The status survives the mark, for a following "echo $?".
		fmt.Fprintf(&script, "%s\ndocsample_status=$?; printf '\\n%s\\n'; (exit $docsample_status)\n", c.Text, endMark)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script.String())
	cmd.Dir = work
	cmd.Env = sampleEnv(bin, t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order a terminal shows
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("timed out after 2m; output so far:\n%s", out.String())
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return nil, err
	}
	parts := strings.Split(out.String(), "\n"+endMark+"\n")
	if len(parts) != len(s.Commands)+1 {
		return nil, fmt.Errorf("the shell ran %d of %d commands (%v); output:\n%s", len(parts)-1, len(s.Commands), err, out.String())
	}
	return parts[:len(s.Commands)], nil
}

// sampleEnv is the environment of the samples: the built mcpredict first
// in PATH, no colors, no terminal, the verdict cache in cache, and no
// other MCPREDICT_ setting than the spin and C compiler binaries.
func sampleEnv(bin, cache string) []string {
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NO_COLOR=1",
		"TERM=dumb",
		"XDG_CACHE_HOME=" + cache,
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "MCPREDICT_SPIN" || k == "MCPREDICT_CC":
		case strings.HasPrefix(k, "MCPREDICT_"), k == "PATH", k == "NO_COLOR", k == "TERM",
			k == "XDG_CACHE_HOME", strings.HasPrefix(k, "CLICOLOR"), k == "COLUMNS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// requireSpin fails the test when spin is missing: the samples run
// mcpredict with Spin, and the project's set-up installs it.
func requireSpin(t *testing.T) {
	t.Helper()
	spin := os.Getenv("MCPREDICT_SPIN")
	if spin == "" {
		spin = "spin"
	}
	if _, err := exec.LookPath(spin); err != nil {
		t.Fatalf("the documentation samples run mcpredict with the Spin model checker: %v (make setup installs it)", err)
	}
}

// build builds mcpredict and its trace-format plugins into a temporary
// directory and returns it.
func build(t *testing.T, root string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(gobin, "build", "-o", dir+string(os.PathSeparator), "./cmd/mcpredict", "./plugins/std", "./plugins/jsonl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The plugins are found next to mcpredict by their names (formats/host.go).
	for _, p := range []string{"std", "jsonl"} {
		if err := os.Rename(filepath.Join(dir, p), filepath.Join(dir, "mcpredict-format-"+p)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scratchRoot returns a directory that looks like the repository root —
// a symbolic link to each of its entries — with bin linked to the built
// binaries: the samples run there, and the files they write stay there.
func scratchRoot(t *testing.T, root, bin string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "bin" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(work, "bin")); err != nil {
		t.Fatal(err)
	}
	return work
}
