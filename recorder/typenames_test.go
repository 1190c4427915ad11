package recorder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestTypeFit records a pool chunk first used for two struct entry (an
// 8-byte pointer field notes at +8 of each) and then reused for a struct
// obj whose ints complete and refcount lie where the second entry's notes
// was: the accesses vote for struct entry, whose field does not fit the
// two 4-byte accesses (issue 38: Apache's mod_mem_cache object named
// mem_cache_object_t[1].notes). The two ints must be two variables, named
// by offset, the fields that fit keep their type names, and the report has
// the real lost update on refcount and nothing mixing the two.
func TestTypeFit(t *testing.T) {
	const src = "testdata/typefit/typefit.c"
	bin := mcpredict(t)
	mk := markers(t, src)
	prog := build(t, src)
	trace, _ := record(t, prog)
	evs := parseTrace(t, trace)

	site := fmt.Sprintf("malloc@typefit.c:%d", mk["pool"])
	one := func(line int) string {
		t.Helper()
		es := find(evs, "Write", "", line)
		if len(es) == 0 {
			t.Fatalf("no write at line %d", line)
		}
		return es[0].objs[0]
	}
	complete, refcount := one(mk["complete"]), one(mk["refcount"])
	if complete != site+"+24" || refcount != site+"+28" {
		t.Errorf("complete is %s and refcount %s, want %s+24 and %s+28", complete, refcount, site, site)
	}
	for _, e := range evs {
		if (e.action == "Read" || e.action == "Write") && e.line == mk["race"] && e.objs[0] != refcount {
			t.Errorf("%v: the increment of refcount is not %s", e, refcount)
		}
		if strings.Contains(e.objs[0], "notes") && e.objs[0] != "entry.notes("+site+")" {
			t.Errorf("%v: a field of the wrong type", e)
		}
	}
	if key := one(mk["key"]); key != "entry.key("+site+")" {
		t.Errorf("entry.key is named %s, want entry.key(%s)", key, site)
	}

	ids := bugIDs(t, bin, trace)
	onRefcount := false
	for _, id := range ids {
		vars := strings.Fields(id)[2]
		if vars != refcount {
			t.Errorf("bug %s: not on refcount alone", id)
		} else {
			onRefcount = true
		}
	}
	if !onRefcount {
		t.Errorf("no bug on %s (the increments race): %v", refcount, ids)
	}
}

// TestMappedNames records a counter in an anonymous shared mapping and
// one in a file mapped shared, both incremented by two threads without a
// lock (issue 38: Apache's scoreboard was named by its raw address): each
// is named by its mapping's call site and offset, the same in two runs,
// and each has its lost update.
func TestMappedNames(t *testing.T) {
	const src = "testdata/mapped/mapped.c"
	bin := mcpredict(t)
	mk := markers(t, src)
	prog := build(t, src)
	served := fmt.Sprintf("mmap@mapped.c:%d+8", mk["map"])
	word := fmt.Sprintf("mmap@mapped.c:%d+4", mk["fmap"])
	var first []string
	for run := 0; run < 2; run++ {
		trace, _ := record(t, prog)
		evs := parseTrace(t, trace)
		mustFind(t, evs, "Write", served, mk["served"])
		mustFind(t, evs, "Write", word, mk["file"])
		mustFind(t, evs, "Alloc", fmt.Sprintf("*mmap@mapped.c:%d", mk["map"]), mk["map"])
		mustFind(t, evs, "Free", fmt.Sprintf("*mmap@mapped.c:%d", mk["fmap"]), mk["unmap"])
		vars := variables(evs)
		for _, v := range vars {
			if strings.HasPrefix(v, "0x") {
				t.Errorf("run %d: variable %s named by its address", run, v)
			}
		}
		if run == 0 {
			first = vars
		} else if !slices.Equal(first, vars) {
			t.Errorf("the variables differ between runs:\n%v\n%v", first, vars)
		}
		if run == 0 {
			found := map[string]bool{}
			for _, id := range bugIDs(t, bin, trace) {
				found[strings.Fields(id)[2]] = true
			}
			if !found[served] || !found[word] {
				t.Errorf("bugs on %v, want lost updates on %s and %s", found, served, word)
			}
		}
	}
}
