package std

import "testing"

// TestRAPIDFiles: RAPID's own lines (begin and end without decor, numbered
// locations) read as Begin/End of the label "atomic" at loc:N.
func TestRAPIDFiles(t *testing.T) {
	tests := []struct {
		line string
		want Event
	}{
		{"T1|begin|1", Event{Thread: "T1", Action: "Begin", Object: "atomic", File: "loc", Line: 1}},
		{"T1|end|5", Event{Thread: "T1", Action: "End", Object: "atomic", File: "loc", Line: 5}},
		{"T1|begin()|7", Event{Thread: "T1", Action: "Begin", Object: "atomic", File: "loc", Line: 7}},
		{"T2|w(x)|3", Event{Thread: "T2", Action: "Write", Object: "x", File: "loc", Line: 3}},
		{"T2|acq(m)|0", Event{Thread: "T2", Action: "Lock", Object: "m", File: "loc", Line: 0}},
	}
	for _, tc := range tests {
		got, err := Parse([]byte(tc.line))
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
	if !Detect([]byte("T1|begin|1\nT1|r(x)|2\n")) {
		t.Error("a RAPID file starting with begin is not detected as STD")
	}
}
