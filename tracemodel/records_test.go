package tracemodel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sliceSource delivers records in batches of size n.
type sliceSource struct {
	recs []Record
	n    int
}

func (s *sliceSource) Next(context.Context) ([]Record, error) {
	if len(s.recs) == 0 {
		return nil, io.EOF
	}
	k := min(s.n, len(s.recs))
	out := s.recs[:k]
	s.recs = s.recs[k:]
	return out, nil
}

// csvRecords splits CSV trace text into records the way a plugin would.
func csvRecords(t *testing.T, text string) []Record {
	t.Helper()
	var out []Record
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		f := fields(nil, []byte(line))
		r := Record{Thread: f[0], Action: f[3], Object: f[4], TraceLine: i + 1}
		if len(f) > 5 {
			r.Object2 = f[5]
		}
		if string(f[2]) != "?" {
			file, ln, msg := parseLoc(f[2])
			if msg != "" {
				t.Fatalf("line %d: %s", i+1, msg)
			}
			r.File, r.Line = file, ln
		}
		out = append(out, r)
	}
	return out
}

func TestParseRecordsEqualsParse(t *testing.T) {
	for _, path := range []string{"../examples/bank.csv", "../examples/logbuf.csv", "../examples/condvar-handoff.csv", "../examples/splash-barrier.csv"} {
		t.Run(path, func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Parse(context.Background(), bytes.NewReader(text), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 7, 4096} {
				got, err := ParseRecords(context.Background(), &sliceSource{recs: csvRecords(t, string(text)), n: n}, path, Options{})
				if err != nil {
					t.Fatalf("batch %d: %v", n, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("batch %d: the model of the records differs from the model of the CSV text", n)
				}
			}
		})
	}
}

func TestParseRecordsErrors(t *testing.T) {
	rec := func(line int, thread, action, obj string) Record {
		return Record{Thread: []byte(thread), Action: []byte(action), Object: []byte(obj), File: []byte("a.c"), Line: line, TraceLine: line}
	}
	tests := []struct {
		name string
		recs []Record
		want string
	}{
		{"join of unknown thread", []Record{rec(3, "1", "Join", "7")}, "t.std:3: Join of unknown thread 7"},
		{"unlock not held", []Record{rec(1, "1", "Write", "x"), rec(4, "1", "Unlock", "m")}, "t.std:4: Unlock of m, which thread 1 does not hold"},
		{"unknown action", []Record{rec(2, "1", "Jump", "x")}, `t.std:2: unknown action "Jump"`},
		{"problem", []Record{{TraceLine: 5, Problem: "bad op"}}, "t.std:5: bad op"},
		{"line order", []Record{rec(5, "1", "Read", "x"), rec(4, "1", "Read", "x")}, "t.std:5: record with trace line 4 after trace line 5"},
		{"no trace line", []Record{rec(0, "1", "Read", "x")}, "t.std:0: record with trace line 0"},
		{"line without file", []Record{{Thread: []byte("1"), Action: []byte("Read"), Object: []byte("x"), Line: 3, TraceLine: 1}}, "t.std:1: location with line 3 but no file"},
		{"empty thread", []Record{rec(1, "", "Read", "x")}, "t.std:1: empty thread field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRecords(context.Background(), &sliceSource{recs: tc.recs, n: 2}, "t.std", Options{StrictSync: true})
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ParseError starting with %q", err, tc.want)
			}
		})
	}
	// Lenient: the bad records are skipped and counted.
	recs := []Record{rec(1, "1", "Write", "x"), rec(2, "1", "Unlock", "m"), {TraceLine: 3, Problem: "bad op"}, rec(4, "2", "Read", "x")}
	m, err := ParseRecords(context.Background(), &sliceSource{recs: recs, n: 3}, "t.std", Options{Lenient: true, StrictSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Skipped != 2 || len(m.Events) != 2 || m.Problems[1] != "t.std:3: bad op" {
		t.Fatalf("lenient: skipped %d, events %d, problems %q", m.Skipped, len(m.Events), m.Problems)
	}
	// Without StrictSync, the Unlock not held is a warning (dropped), not
	// a skipped line.
	m, err = ParseRecords(context.Background(), &sliceSource{recs: recs, n: 3}, "t.std", Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"t.std:2: Unlock of m at a.c:2, which thread 1 does not hold: dropped"}
	if m.Skipped != 1 || len(m.Events) != 2 || !slices.Equal(m.Warnings, want) {
		t.Fatalf("lenient: skipped %d, events %d, warnings %q, want %q", m.Skipped, len(m.Events), m.Warnings, want)
	}
}
