package svd

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpredict/mcpredict/analysis/internal/atest"
	"github.com/mcpredict/mcpredict/tracemodel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func check(t *testing.T, path string, opts Options) *Result {
	t.Helper()
	m, err := tracemodel.Open(context.Background(), path, tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(context.Background(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// brief is "kind var role@loc...".
func brief(kind, v string, as []Access) string {
	s := kind + " " + v
	for _, a := range as {
		s += " " + a.Role + "@" + a.Where
	}
	return s
}

// TestPaper asserts the verdicts of the paper (seeds/003) on its figures,
// and the rules of its definitions, each explained in its fixture.
func TestPaper(t *testing.T) {
	tests := []struct {
		file    string
		opts    Options
		want    []string // violations
		wantLog []string // a-posteriori log entries
	}{
		// Fig. 2: one violation, "when 3.09 is writing buf->outcnt by
		// observing a conflict (3.05 vs. 4.09)".
		{"fig2_apache.csv", Options{}, []string{"remote-write buf->outcnt read@log.c:5 remote@log.c:9 write@log.c:9"}, nil},
		{"fig2_apache.csv", Options{ValueFlow: "statement"}, []string{"remote-write buf->outcnt read@log.c:5 remote@log.c:9 write@log.c:9"}, nil},
		{"fig2_apache.csv", Options{ValueFlow: "invocation"}, []string{"remote-write buf->outcnt read@log.c:5 remote@log.c:9 write@log.c:9"}, nil},
		// Fig. 1: data races, but "both CUs are serializable": nothing.
		{"fig1_mysql.csv", Options{}, nil, nil},
		{"fig1_mysql.csv", Options{ValueFlow: "invocation"}, nil, nil},
		// Fig. 3: missed online (H1 fails); the log holds 5.12 and 5.14,
		// each with the remote write and the thread's own write it
		// overwrote.
		{"fig3_mysql_prepared.csv", Options{}, nil, []string{
			"log join_tab->used_fields read@sql.c:12 remote@sql.c:8 local@sql.c:8",
			"log field->query_id read@sql.c:14 remote@sql.c:3 local@sql.c:3",
		}},
		// Definition 2 / Fig. 4: the read-back cuts the CU.
		{"def2_cut.csv", Options{}, nil, nil},
		// §3.3, strict 2PL's second rule.
		{"intermediate.csv", Options{}, []string{"remote-read x read@i.c:10 remote@i.c:20 write@i.c:12"}, nil},
		// The value of a dead poll no longer forms a CU.
		{"polled_flag.csv", Options{}, nil, nil},
		// Conflicts the synchronization order forces: dropped, unless
		// kept as the paper does.
		{"barrier.csv", Options{}, nil, nil},
		{"barrier.csv", Options{IgnoreSync: true}, []string{"remote-write a[1] read@b.c:10 remote@b.c:12 write@b.c:12"}, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s/%v", tc.file, tc.opts.ValueFlow, tc.opts.IgnoreSync), func(t *testing.T) {
			res := check(t, filepath.Join("testdata", tc.file), tc.opts)
			var got, gotLog []string
			for _, v := range res.Violations {
				got = append(got, brief(v.Kind, v.Var, v.Events))
				if v.Message == "" || v.Count < 1 {
					t.Errorf("incomplete violation %+v", v)
				}
			}
			for _, l := range res.Log {
				gotLog = append(gotLog, brief("log", l.Events[0].Var, l.Events))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if tc.wantLog != nil && !slices.Equal(gotLog, tc.wantLog) {
				t.Errorf("log\n  %s\nwant\n  %s", strings.Join(gotLog, "\n  "), strings.Join(tc.wantLog, "\n  "))
			}
		})
	}
}

// TestGolden compares the full text with the golden files (-update
// rewrites them).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			res := check(t, f, Options{})
			var b strings.Builder
			for _, v := range res.Violations {
				fmt.Fprintf(&b, "%s %s count=%d\n  %s\n", v.Kind, v.Var, v.Count, v.Message)
				for _, a := range v.Events {
					fmt.Fprintf(&b, "  thread %s %s %s %s %s\n", a.Thread, a.Role, a.Kind, a.Var, a.Where)
				}
			}
			for _, l := range res.Log {
				fmt.Fprintf(&b, "log count=%d\n", l.Count)
				for _, a := range l.Events {
					fmt.Fprintf(&b, "  thread %s %s %s %s %s\n", a.Thread, a.Role, a.Kind, a.Var, a.Where)
				}
			}
			fmt.Fprintf(&b, "summary: %s\n", res.Summary())
			atest.Golden(t, f, b.String(), *update)
		})
	}
}

func TestCanceled(t *testing.T) {
	m, err := tracemodel.Open(context.Background(), filepath.Join("testdata", "barrier.csv"), tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Check(ctx, m, Options{}); err == nil {
		t.Error("no error from a canceled context")
	}
}

func TestBadMode(t *testing.T) {
	m, err := tracemodel.Open(context.Background(), filepath.Join("testdata", "barrier.csv"), tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Check(ctx, m, Options{ValueFlow: "registers"}); err == nil {
		t.Error("no error for an unknown value-flow mode")
	}
}

// TestRandom runs the analysis on random traces with regions and
// invocations, in every mode: no panic, no error.
func TestRandom(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		trace, err := atest.RandomWithRegions(seed, seed%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tracemodel.Parse(context.Background(), bytes.NewReader(trace), "random.csv", tracemodel.Options{})
		if err != nil {
			continue // some rewritten traces are not valid
		}
		for _, mode := range []string{"statement", "update", "invocation"} {
			if _, err := Check(context.Background(), m, Options{ValueFlow: mode}); err != nil {
				t.Fatalf("seed %d, %s: %v", seed, mode, err)
			}
		}
	}
}
