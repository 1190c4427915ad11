package recorder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeNames records heap blocks that a path would name badly — a log
// buffer reached only through a void *, objects on intrusive lists whose
// links point into the middle or the start of a bigger struct, the third
// node of a singly linked list — and checks that each is named by its
// struct type, field and allocation site, and that the list node keeps
// its path as a detail, in the trace and in the report.
func TestTypeNames(t *testing.T) {
	const src = "testdata/typenames/typenames.c"
	bin := mcpredict(t)
	mk := markers(t, src)
	prog := build(t, src)
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)

	site := func(marker string) string { return fmt.Sprintf("calloc@typenames.c:%d", mk[marker]) }
	for _, want := range []string{
		"buffered_log.outcnt(" + site("log") + ")",
		"buffered_log.outbuf[0](" + site("log") + ")",
		"session.hits(" + site("session") + "#1)",
		"session.link.next(" + site("session") + "#2)",
		"conn.bytes(" + site("conn") + "#1)",
		"conn.link.next(" + site("conn") + "#2)",
		"job.done(" + site("job") + "#3)",
	} {
		if len(find(evs, "Read", want, 0))+len(find(evs, "Write", want, 0)) == 0 {
			t.Errorf("no access to %s", want)
		}
	}
	for _, e := range evs {
		if e.action != "Read" && e.action != "Write" {
			continue
		}
		for _, o := range e.objs {
			// A list link's type is not the type of the block it points
			// into; a path through links is no name.
			if strings.HasPrefix(o, "list") || strings.Contains(o, "next[") || strings.Contains(o, "->next->") {
				t.Errorf("%v: a name through a list link", e)
			}
		}
	}
	job := "job.done(" + site("job") + "#3)"
	if want := "# reached: " + job + " as jobs->next->next->done\n"; !strings.Contains(trace, want) {
		t.Errorf("the trace lacks %q", want)
	}

	path := filepath.Join(t.TempDir(), "typenames.csv")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := runCLI(t, bin, "run", "--format", "json", "--engine", "native", path)
	var rep struct {
		Bugs []struct {
			Vars []string `json:"vars"`
		} `json:"bugs"`
		Reached map[string]string `json:"reached"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON report: %v\n%s", err, out)
	}
	found := map[string]bool{}
	for _, b := range rep.Bugs {
		for _, v := range b.Vars {
			found[v] = true
		}
	}
	for _, v := range []string{"buffered_log.outcnt(" + site("log") + ")", "session.hits(" + site("session") + "#1)",
		"conn.bytes(" + site("conn") + "#1)", job} {
		if !found[v] {
			t.Errorf("no bug on %s (the update is unlocked)", v)
		}
	}
	if got := rep.Reached[job]; got != "jobs->next->next->done" {
		t.Errorf("report reached[%s] = %q, want jobs->next->next->done", job, got)
	}
	text, _ := runCLI(t, bin, "run", "--engine", "native", path)
	if want := job + " first reached as jobs->next->next->done"; !strings.Contains(text, want) {
		t.Errorf("the text report lacks %q:\n%s", want, text)
	}
}
