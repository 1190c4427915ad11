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
// claim must equal Automaton/Accepts over the whole sequence.
//
// The sequences live in a C table inside the model and a c_code statement
// loads the one named by $MCP_SEQ into Promela arrays, which a loop of
// d_step { v = ..; brk1 = ..; brk2 = .. } then plays, so spin -a and gcc run
// once per group of claims rather than once per sequence. (One d_step per
// state written out for 240 sequences makes pan.c take minutes to compile:
// gcc -O1 is superlinear in the size of pan's single transition function, as
// it is in the number of claims, hence also the groups of claims.)
func TestAgainstSpin(t *testing.T) {
	spin, err := exec.LookPath("spin")
	if err != nil {
		t.Skip("spin is not on PATH (Debian/Ubuntu: apt-get install spin); skipping the differential test against Spin")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc is needed to compile Spin's pan.c (apt-get install gcc)")
	}

	const (
		numSeqs    = 320
		maxSeqLen  = 13 // the initial state and up to 12 more
		groupClaim = 4  // claims per compiled pan
	)
	r := rand.New(rand.NewPCG(20120628, 7))
	patterns := Builtin()
	patterns = append(patterns, BuiltinSets()...)
	patterns = append(patterns, BuiltinSets()[0].Swap(), BuiltinSets()[4].Swap())
	// The precise P3, under an id of its own: a model's claims need
	// distinct names.
	precise := Builtin()[2].Precise()
	precise.ID = "P3precise"
	patterns = append(patterns, precise)
	for i := 1; i <= 4; i++ {
		p := randomPattern(r, "U"+strconv.Itoa(i), 6, i > 2)
		p.PlainLast = i%2 == 1
		patterns = append(patterns, p)
	}
	seqs := make([][]Obs, numSeqs)
	for i := range seqs {
		if i%2 == 0 {
			seqs[i] = randomSeq(r, maxSeqLen)
		} else {
			// Plant an instance of some claim so that both verdicts are
			// common for every claim.
			seqs[i] = plantedSeq(r, patterns[r.IntN(len(patterns))], 1+r.IntN(2), maxSeqLen)
		}
	}

	type claim struct {
		p     Pattern
		local int
		pan   string // the pan binary that contains this claim
	}
	var claims []claim
	for _, p := range patterns {
		t.Logf("%s: %s (plain last write: %v)", p.ID, p.Source, p.PlainLast)
		for _, local := range []int{1, 2} {
			claims = append(claims, claim{p: p, local: local})
		}
	}

	// A guard against a hung pan, not a speed assertion: on a loaded
	// machine the 3,840 runs have taken over 4 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := t.TempDir()
	begin := time.Now()
	var wg sync.WaitGroup
	for g := 0; g*groupClaim < len(claims); g++ {
		gdir := filepath.Join(dir, "g"+strconv.Itoa(g))
		group := claims[g*groupClaim : min((g+1)*groupClaim, len(claims))]
		var model strings.Builder
		writeModel(&model, seqs)
		for i := range group {
			model.WriteString(group[i].p.LTL(group[i].local) + "\n")
			group[i].pan = filepath.Join(gdir, "pan")
		}
		if err := os.Mkdir(gdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(gdir, "model.pml"), []byte(model.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := run(ctx, gdir, spin, "-a", "model.pml"); err != nil {
				t.Error(err)
				return
			}
			if err := run(ctx, gdir, gcc, "-O1", "-w", "-o", "pan", "pan.c"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("spin -a and gcc for %d claims: %v", len(claims), time.Since(begin).Round(time.Millisecond))

	type job struct{ seq, claim int }
	jobs := make(chan job)
	var mu sync.Mutex
	verdict := make(map[job]bool)
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
				c := claims[j.claim]
				errs, err := runPan(ctx, c.pan, wdir, c.p.ClaimName(c.local), j.seq)
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

	for ci, c := range claims {
		a := c.p.Automaton(c.local)
		positives := 0
		for s, seq := range seqs {
			st := a.Init()
			for _, o := range seq {
				st = a.Step(st, o)
			}
			got, want := a.Accepts(st), verdict[job{s, ci}]
			if got != want {
				t.Errorf("%s (%s) on sequence %d %v: automaton accepts=%v, spin violation=%v", c.p.ClaimName(c.local), c.p.Source, s, seq, got, want)
			}
			if want {
				positives++
			}
		}
		t.Logf("%s: %d of %d sequences violate", c.p.ClaimName(c.local), positives, len(seqs))
		if positives == 0 || positives == len(seqs) {
			t.Errorf("%s: one-sided test data (%d of %d violate)", c.p.ClaimName(c.local), positives, len(seqs))
		}
	}
}

// writeModel writes a one-process Promela model that plays sequence number
// $MCP_SEQ: every state after the initial one is one d_step, so the claim
// sees exactly the states of the sequence, plus stutters (the loading step,
// loop guards, the end), which a stutter-invariant claim cannot tell apart.
func writeModel(b *strings.Builder, seqs [][]Obs) {
	maxLen := 0
	for _, seq := range seqs {
		maxLen = max(maxLen, len(seq)-1) // seq[0] is the initial state
	}
	fmt.Fprintf(b, "short v;\n\n")
	fmt.Fprintf(b, "byte n;\nshort seqv[%d];\nbyte seqb1[%d];\nbyte seqb2[%d];\nbyte seqp1[%d];\nbyte seqp2[%d];\n\n", maxLen, maxLen, maxLen, maxLen, maxLen)
	b.WriteString("c_decl {\n")
	fmt.Fprintf(b, "\tstatic const short SEQ[%d][%d] = {\n", len(seqs), 1+5*maxLen)
	for _, seq := range seqs {
		fmt.Fprintf(b, "\t\t{%d", len(seq)-1)
		for _, o := range seq[1:] {
			fmt.Fprintf(b, ", %d, %d, %d, %d, %d", Pack(o), bit(o.Brk1), bit(o.Brk2), bit(o.Pub1), bit(o.Pub2))
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t};\n}\n\n")
	b.WriteString(`active proctype sequences() {
	byte i;
	c_code {
		const char *env = getenv("MCP_SEQ");
		int k, sel = env ? atoi(env) : -1;
		if (sel < 0 || sel >= (int) (sizeof SEQ / sizeof SEQ[0])) {
			printf("MCP_SEQ missing or out of range\n");
			exit(1);
		}
		now.n = SEQ[sel][0];
		for (k = 0; k < now.n; k++) {
			now.seqv[k] = SEQ[sel][1+5*k];
			now.seqb1[k] = SEQ[sel][2+5*k];
			now.seqb2[k] = SEQ[sel][3+5*k];
			now.seqp1[k] = SEQ[sel][4+5*k];
			now.seqp2[k] = SEQ[sel][5+5*k];
		}
	};
	do
	:: i < n -> d_step { v = seqv[i]; i++ }
	:: else -> break
	od
}

`)
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}

func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
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
