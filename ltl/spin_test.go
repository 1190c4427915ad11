package ltl

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAgainstSpin is the differential test of the claim text against the
// automaton: for random sequences of model states, Spin's verdict on each
// claim must equal Automaton/Accepts over the whole sequence. One model holds
// all sequences (a c_code statement picks one from the environment) so that
// spin -a and gcc run once.
func TestAgainstSpin(t *testing.T) {
	spin, err := exec.LookPath("spin")
	if err != nil {
		t.Skip("spin is not on PATH (Debian/Ubuntu: apt-get install spin); skipping the differential test against Spin")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc is needed to compile Spin's pan.c (apt-get install gcc)")
	}

	const numSeqs = 240 // sel is a byte
	r := rand.New(rand.NewPCG(20120628, 7))
	patterns := Builtin()
	for i := 1; i <= 3; i++ {
		patterns = append(patterns, randomPattern(r, "U"+strconv.Itoa(i), 6))
	}
	seqs := make([][]Obs, numSeqs)
	for i := range seqs {
		if i%2 == 0 {
			seqs[i] = randomSeq(r, 11)
		} else {
			// Plant an instance of some claim so that both verdicts are
			// common for every claim.
			seqs[i] = plantedSeq(r, patterns[r.IntN(len(patterns))], 1+r.IntN(2), 11)
		}
	}

	dir := t.TempDir()
	var claims []string
	var model strings.Builder
	writeModel(&model, seqs)
	for _, p := range patterns {
		for _, local := range []int{1, 2} {
			claims = append(claims, p.ClaimName(local))
			model.WriteString(p.LTL(local) + "\n")
		}
		t.Logf("%s: %s", p.ID, p.Source)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.pml"), []byte(model.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	begin := time.Now()
	run(ctx, t, dir, spin, "-a", "model.pml")
	t.Logf("spin -a: %v", time.Since(begin).Round(time.Millisecond))
	begin = time.Now()
	run(ctx, t, dir, gcc, "-O1", "-w", "-o", "pan", "pan.c")
	t.Logf("gcc: %v", time.Since(begin).Round(time.Millisecond))
	if os.Getenv("MCP_KEEP") != "" {
		exec.Command("cp", "-r", dir, "/tmp/keep").Run()
	}

	type job struct{ seq, claim int }
	jobs := make(chan job)
	var mu sync.Mutex
	verdict := make(map[job]bool)
	var wg sync.WaitGroup
	begin = time.Now()
	for w := range runtime.NumCPU() {
		// Each worker has its own directory: pan writes its trail file into
		// the working directory.
		wdir := filepath.Join(dir, "w"+strconv.Itoa(w))
		if err := os.Mkdir(wdir, 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for j := range jobs {
				errs, err := runPan(ctx, filepath.Join(dir, "pan"), wdir, claims[j.claim], j.seq)
				if err != nil {
					t.Error(err)
					continue
				}
				mu.Lock()
				verdict[j] = errs
				mu.Unlock()
			}
		})
	}
	for s := range seqs {
		for c := range claims {
			jobs <- job{s, c}
		}
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d pan runs: %v", len(seqs)*len(claims), time.Since(begin).Round(time.Millisecond))
	if t.Failed() {
		return
	}

	positives := make([]int, len(claims))
	for s, seq := range seqs {
		c := 0
		for _, p := range patterns {
			for _, local := range []int{1, 2} {
				a := p.Automaton(local)
				st := a.Init()
				for _, o := range seq {
					st = a.Step(st, o)
				}
				got, want := a.Accepts(st), verdict[job{s, c}]
				if got != want {
					t.Errorf("%s (%s) on sequence %d %v: automaton accepts=%v, spin errors=%v", claims[c], p.Source, s, seq, got, want)
				}
				if want {
					positives[c]++
				}
				c++
			}
		}
	}
	for c, n := range positives {
		t.Logf("%s: %d of %d sequences violate", claims[c], n, len(seqs))
		if n == 0 || n == len(seqs) {
			t.Errorf("%s: one-sided test data (%d of %d violate)", claims[c], n, len(seqs))
		}
	}
}

// writeModel writes a one-process Promela model that runs sequence number
// $MCP_SEQ: each state after the initial one is a d_step, so the claim sees
// exactly the states of the sequence (plus stutters, which cannot matter).
func writeModel(b *strings.Builder, seqs [][]Obs) {
	b.WriteString("short v;\nbit brk1;\nbit brk2;\nbyte sel;\n\n")
	b.WriteString("active proctype sequences() {\n")
	b.WriteString("\tc_code { now.sel = atoi(getenv(\"MCP_SEQ\")); };\n")
	b.WriteString("\tif\n")
	for i, seq := range seqs {
		fmt.Fprintf(b, "\t:: sel == %d -> skip", i)
		for _, o := range seq[1:] { // seq[0] is the initial state
			fmt.Fprintf(b, "; d_step { v = %d; brk1 = %d; brk2 = %d }", o.V, bit(o.Brk1), bit(o.Brk2))
		}
		b.WriteString("\n")
	}
	b.WriteString("\tfi\n}\n\n")
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func run(ctx context.Context, t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

var errorsRE = regexp.MustCompile(`errors: (\d+)`)

// runPan checks one claim on one sequence and reports whether Spin found a
// violation. Anything but a clean, complete answer is an error.
func runPan(ctx context.Context, pan, dir, claim string, seq int) (bool, error) {
	cmd := exec.CommandContext(ctx, pan, "-a", "-N", claim, "-m100000", "-w10")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_SEQ="+strconv.Itoa(seq))
	out, err := cmd.CombinedOutput()
	text := string(out)
	m := errorsRE.FindAllStringSubmatch(text, -1)
	switch {
	case len(m) != 1:
		return false, fmt.Errorf("pan -N %s, sequence %d: no verdict (%v):\n%s", claim, seq, err, text)
	case !strings.Contains(text, "pan: ltl formula "+claim+"\n"):
		return false, fmt.Errorf("pan -N %s, sequence %d: did not check that claim:\n%s", claim, seq, text)
	case strings.Contains(text, "max search depth too small"):
		return false, fmt.Errorf("pan -N %s, sequence %d: search truncated:\n%s", claim, seq, text)
	}
	switch m[0][1] {
	case "0":
		if strings.Contains(text, "Search not completed") {
			return false, fmt.Errorf("pan -N %s, sequence %d: incomplete search without error:\n%s", claim, seq, text)
		}
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("pan -N %s, sequence %d: unexpected %s:\n%s", claim, seq, m[0][0], text)
}
