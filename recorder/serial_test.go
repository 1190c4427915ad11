package recorder

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestSerial records three workers that interleave unscheduled with
// RecordOptions.Serial: each runs all its turns before the next begins,
// in the order they were created ("first") or the reverse ("last"), and
// the trace says how it was recorded.
func TestSerial(t *testing.T) {
	exe := build(t, "testdata/serial/serial.c")
	for _, tt := range []struct {
		order string
		want  []string // the workers' handles, in the order they ran
	}{
		{"first", []string{"2", "3", "4"}},
		{"last", []string{"4", "3", "2"}},
	} {
		t.Run(tt.order, func(t *testing.T) {
			var trace, stderr bytes.Buffer
			res, err := Record(testContext(t), &trace, RecordOptions{Program: exe, Serial: tt.order, Stdout: &stderr, Stderr: &stderr})
			if err != nil {
				t.Fatalf("recording: %v\n%s", err, stderr.String())
			}
			if res.ExitCode != 0 {
				t.Fatalf("the program %s\n%s", res.Exit, stderr.String())
			}
			if !strings.Contains(trace.String(), "# serial: "+tt.order+"\n") {
				t.Errorf("no serial line in the trace header")
			}
			// The threads of the accesses of count, each run once.
			var runs []string
			for _, ev := range parseTrace(t, trace.String()) {
				if ev.action != "Write" || len(ev.objs) == 0 || ev.objs[0] != "count" {
					continue
				}
				if len(runs) == 0 || runs[len(runs)-1] != ev.thread {
					runs = append(runs, ev.thread)
				}
			}
			if !slices.Equal(runs, tt.want) {
				t.Errorf("the workers wrote count in runs %v, want %v", runs, tt.want)
			}
		})
	}
	var trace bytes.Buffer
	if _, err := Record(testContext(t), &trace, RecordOptions{Program: exe, Serial: "middle"}); err == nil || !strings.Contains(err.Error(), `serial order "middle"`) {
		t.Errorf("Serial middle: error %v, want a bad serial order", err)
	}
}
