package spinrunner

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePan(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want panReport
	}{
		{
			name: "violation",
			out: `pan: ltl formula P3_1
pan:1: assertion violated  !((v==65)) (at depth 11)
pan: wrote model.pml.trail

(Spin Version 6.5.2 -- 6 December 2019)
Warning: Search not completed
State-vector 44 byte, depth reached 16, errors: 1
       13 states, stored
        1 states, matched
`,
			want: panReport{errors: 1, haveErrors: true, stored: 13, depth: 16, notComplete: true, errMsg: "assertion violated  !((v==65))"},
		},
		{
			name: "holds, large count in exponent form",
			out: `State-vector 44 byte, depth reached 2048, errors: 0
1.2345678e+08 states, stored
`,
			want: panReport{haveErrors: true, stored: 123456780, depth: 2048},
		},
		{
			name: "depth too small",
			out: `error: max search depth too small
Warning: Search not completed
State-vector 44 byte, depth reached 4, errors: 0
        2 states, stored
`,
			want: panReport{haveErrors: true, stored: 2, depth: 4, truncated: true, notComplete: true},
		},
		{
			name: "memory limit",
			out: `pan: reached -DMEMLIM bound
	2.68367e+08 bytes used
Warning: Search not completed
State-vector 44 byte, depth reached 99999, errors: 0
  4578935 states, stored
`,
			want: panReport{haveErrors: true, stored: 4578935, depth: 99999, outOfMemory: true, notComplete: true},
		},
		{name: "garbage", out: "Segmentation fault\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePan([]byte(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestIsClaimViolation(t *testing.T) {
	for msg, want := range map[string]bool{
		"assertion violated  !((v==65))":    true,
		"acceptance cycle":                  true,
		"claim violated!":                   true,
		"VECTORSZ is too small, edit pan.h": false,
		"":                                  false,
	} {
		if got := isClaimViolation(msg); got != want {
			t.Errorf("isClaimViolation(%q) = %v", msg, got)
		}
	}
}

func TestParseTrail(t *testing.T) {
	out := `ltl P3_1: ! (<> ((v==1)))
starting claim 3
Never claim moves to line 6	[(1)]
Starting t1 with pid 2
  2:	proc  0 (:init::1) model.pml:16 (state 1)	[(run t1())]
  5:	proc  1 (t1:1) model.pml:7 (state 3)	[v = 1]
  5:	proc  1 (t1:1) model.pml:7 (state 2)	[brk1 = 0]
Never claim moves to line 5	[((v==1))]
  7:	proc  2 (t2:1) model.pml:12 (state 3)	[a[0] = 66]
  9: proc 2 terminates
 11:	proc  1 (t1:1) model.pml:8 (state 6)	[v = 65]
 11:	proc  1 (t1:1) model.pml:9 (state 7)	[brk1 = 0]
spin: _spin_nvr.tmp:10, Error: assertion violated
spin: trail ends after 12 steps
#processes: 2
 12:	proc  1 (t1:1) model.pml:9 (state 7) <valid end state>
 12:	proc  - (P3_1:1) _spin_nvr.tmp:9 (state 18)
`
	got, err := parseTrail([]byte(out), "model.pml", "P3_1")
	if err != nil {
		t.Fatal(err)
	}
	want := trail{ended: true, steps: []TrailStep{
		{Step: 5, Proc: 1, ProcName: "t1", Line: 7, Stmt: "v = 1; brk1 = 0"},
		{Step: 7, Proc: 2, ProcName: "t2", Line: 12, Stmt: "a[0] = 66"},
		{Step: 11, Proc: 1, ProcName: "t1", Line: 8, Stmt: "v = 65"},
		{Step: 11, Proc: 1, ProcName: "t1", Line: 9, Stmt: "brk1 = 0"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	got, _ = parseTrail([]byte("spin: model.pml:6, Error: assertion violated\n"), "model.pml", "P3_1")
	if got.modelFail != "assertion violated" || got.ended {
		t.Errorf("model assertion: got %+v", got)
	}
}

// TestParsePanTrail reads the replay format of `pan -r -v`: the claim is
// process 0, init 1, and the globals follow each step.
func TestParsePanTrail(t *testing.T) {
	out := `0: Claim P3_1 (1), from state 18
  1: proc  0 (P3_1)  model.pml:20 (state 18) trans {72533,1} [(1)]
global vars:
	short  v:	0
  2: proc  1 (:init:)  model.pml:-27790 (state 3) trans {71874,299} [(run t1())]
  5: proc  2 (t1)  model.pml:7 (state 3) trans {12,3} [v = ((v&1280)|1)]
global vars:
	short  v:	1
  6: proc  0 (P3_1)  model.pml:21 (state 2) trans {72533,2} [(((v&767)==1))]
  7: proc  3 (t2)  model.pml:12 (state 3) trans {14,1} [v = ((v&640)|66)]
  9: proc  2 (t1)  model.pml:8 (state 4) trans {12,4} [v = ((v&1280)|65)]
pan:1: assertion violated  !(((v&767)==65)) (at depth 10)
spin: trail ends after 10 steps
`
	got, err := parseTrail([]byte(out), "model.pml", "P3_1")
	if err != nil {
		t.Fatal(err)
	}
	want := trail{ended: true, steps: []TrailStep{
		{Step: 5, Proc: 2, ProcName: "t1", Line: 7, Stmt: "v = ((v&1280)|1)"},
		{Step: 7, Proc: 3, ProcName: "t2", Line: 12, Stmt: "v = ((v&640)|66)"},
		{Step: 9, Proc: 2, ProcName: "t1", Line: 8, Stmt: "v = ((v&1280)|65)"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestDefinedClaims(t *testing.T) {
	spinOut := `ltl P3_1: ! (<> ((v==1)))
ltl late2: ! (<> ((v==65)))
  the model contains 3 never claims: explicit, late2, P3_1
`
	src := "never explicit { skip }\n/* never mind { */\n"
	got := definedClaims([]byte(spinOut), []byte(src))
	want := map[string]bool{"P3_1": true, "late2": true, "explicit": true, "mind": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestTrimOutput(t *testing.T) {
	if got := trimOutput([]byte("  a\nb \n\n")); got != "a\nb" {
		t.Errorf("short output: %q", got)
	}
	var lines []string
	for i := range 100 {
		lines = append(lines, strings.Repeat("x", i%3+1))
	}
	got := strings.Split(trimOutput([]byte(strings.Join(lines, "\n"))), "\n")
	if len(got) != maxOutputLines+1 || !strings.Contains(got[maxOutputLines/2], "60 lines omitted") {
		t.Errorf("long output trimmed to %d lines: %q", len(got), got[maxOutputLines/2])
	}
	if got[0] != lines[0] || got[len(got)-1] != lines[99] {
		t.Error("head or tail lost")
	}
}

func TestSanitizeAndQuote(t *testing.T) {
	for in, want := range map[string]string{
		"balance t1,t2":    "balance_t1_t2",
		"../../etc":        "etc",
		"":                 "model",
		"x/y:z#3":          "x_y_z_3",
		"v#2 (3047, 3020)": "v_2_3047_3020",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"/usr/bin/gcc":   "/usr/bin/gcc",
		"/opt/my cc/gcc": "'/opt/my cc/gcc'",
		"/x/it's/gcc":    `'/x/it'\''s/gcc'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchDepth(t *testing.T) {
	for steps, want := range map[int]int{0: 10000, 100: 10000, 5000: 21000} {
		if got := searchDepth(steps); got != want {
			t.Errorf("searchDepth(%d) = %d, want %d", steps, got, want)
		}
	}
}
