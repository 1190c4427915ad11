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

// TestFastMatchesParse: the allocation-free path reads every line it takes
// as Parse does (RAPID's numbered locations included: convert --rapid
// writes them on every line), and leaves the others to Parse.
func TestFastMatchesParse(t *testing.T) {
	tests := []struct {
		line string
		fast bool
	}{
		{"T2|w(x)|3", true},
		{"T2|r(x[12])|0", true},
		{"main|acq(qlock)|123456789", true},
		{"T1|fork(T2)|f.c:10", true},
		{"T1|rel(m)|?", false},
		{"T1|rel(m)|1234567890", false}, // too long for the fast path
		{"T1|rel(m)|12a", false},
		{"T1|rel(m)|+5", false},
		{"T1|begin|1", false},
		{"T1|wait(c,m)|4", false},
		{"T1|w(x)|f.c-10", false},
	}
	for _, tc := range tests {
		f, action, file, n, ok := Fast([]byte(tc.line))
		if ok != tc.fast {
			t.Errorf("Fast(%q): ok %v, want %v", tc.line, ok, tc.fast)
		}
		want, err := Parse([]byte(tc.line))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.line, err)
		}
		if !ok {
			continue
		}
		got := Event{Thread: string(f.Thread), Action: action, Object: string(f.Object), File: string(file), Line: n}
		if got != want {
			t.Errorf("Fast(%q) = %+v, Parse = %+v", tc.line, got, want)
		}
	}
}
