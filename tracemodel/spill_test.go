package tracemodel

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpredict/mcpredict/gen"
)

// spillTraces are the traces the spill tests parse both ways: the shipped
// examples and generated ones of every kind.
func spillTraces(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, err := filepath.Glob("../examples/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped traces: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	n := int64(300)
	if testing.Short() {
		n = 100
	}
	var configs []gen.Config
	for seed := range n {
		configs = append(configs, gen.Config{Kind: gen.KindRandom, Seed: seed, Events: 8 + seed%40})
	}
	for seed := range int64(6) {
		configs = append(configs,
			gen.Config{Kind: gen.KindFFT, Seed: seed, Threads: 2 + int(seed%3), Vars: 4, Phases: 3, Bugs: int(seed % 2)},
			gen.Config{Kind: gen.KindServer, Seed: seed, Threads: 2 + int(seed%3), Phases: 2, Bugs: 4})
	}
	for _, c := range configs {
		var buf bytes.Buffer
		if _, err := gen.Write(context.Background(), &buf, c); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%s-%d.csv", c.Kind, c.Seed)] = buf.Bytes()
	}
	return out
}

// TestSpillSameModel parses every trace in memory, spilled from the first
// event (as a format plugin's records), and spilled part way through, and
// requires the same events, indexes, warnings and models of every
// (variable, thread pair).
func TestSpillSameModel(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on this system")
	}
	ctx := context.Background()
	dir := t.TempDir()
	popts, err := SemanticsOptions(SemanticsPrecise)
	if err != nil {
		t.Fatal(err)
	}
	modes := []Options{
		{Spill: SpillAlways, SpillDir: dir},
		{Spill: SpillAuto, SpillAfter: 5, SpillDir: dir, MaxResident: 1}, // trimmed all the time
		{Spill: SpillAlways, SpillDir: dir, bucketAccesses: 3},           // many buckets of variables
		{Spill: SpillNever, bucketAccesses: 1},                           // a bucket a variable, in memory
	}
	models := 0
	for name, text := range spillTraces(t) {
		mem, err := Parse(ctx, bytes.NewReader(text), name, Options{Spill: SpillNever})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if mem.Spill().Spilled {
			t.Fatalf("%s: spilled with SpillNever", name)
		}
		for k, o := range modes {
			m, err := Parse(ctx, bytes.NewReader(text), name, o)
			if k == 0 {
				// The records of a format plugin, spilled the same way.
				m, err = ParseRecords(ctx, &sliceSource{recs: csvRecords(t, string(text)), n: 7}, name, o)
			}
			if err != nil {
				t.Fatalf("%s %+v: %v", name, o, err)
			}
			st := m.Spill()
			if o.Spill != SpillNever && len(m.Events) > 5 && (!st.Spilled || st.DiskBytes < int64(len(m.Events))*eventSize) {
				t.Errorf("%s %+v: spill stats %+v for %d events", name, o, st, len(m.Events))
			}
			if !slices.Equal(mem.Events, m.Events) {
				t.Fatalf("%s %+v: events differ", name, o)
			}
			for i := range mem.Threads {
				if !slices.Equal(mem.Threads[i].Events, m.Threads[i].Events) {
					t.Fatalf("%s %+v: events of thread %d differ", name, o, i+1)
				}
			}
			for v := range mem.Vars {
				if !slices.Equal(mem.Vars[v].Accesses, m.Vars[v].Accesses) {
					t.Fatalf("%s %+v: accesses of %s differ", name, o, mem.Vars[v].Name)
				}
			}
			if !maps.EqualFunc(mem.lockOps, m.lockOps, slices.Equal) {
				t.Fatalf("%s %+v: lock operations differ", name, o)
			}
			if st.Spilled && len(m.lockOps) > 0 && m.spill.locks.Load() == nil {
				t.Fatalf("%s %+v: spilled model's lock operations are not in their file", name, o)
			}
			if !slices.Equal(mem.Warnings, m.Warnings) {
				t.Fatalf("%s %+v: warnings differ:\n%q\n%q", name, o, mem.Warnings, m.Warnings)
			}
			for _, sv := range mem.SharedVars() {
				for t1, t2 := range sv.Pairs() {
					want, werr := mem.Project(sv.Var, t1, t2, popts)
					got, gerr := m.Project(sv.Var, t1, t2, popts)
					if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
						t.Fatalf("%s %+v: model of %s threads %d,%d differs", name, o, sv.Name, t1, t2)
					}
					models++
				}
			}
			if err := m.Close(); err != nil {
				t.Fatalf("%s: Close: %v", name, err)
			}
			if st.Spilled && m.Events != nil || m.Spill().Spilled {
				t.Fatalf("%s: Close left the store", name)
			}
		}
	}
	t.Logf("%d models compared", models)
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("spill files left in the temporary directory: %d", len(left))
	}
}

func TestParseSpillMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SpillMode
		ok   bool
	}{
		{"", SpillAuto, true}, {"auto", SpillAuto, true}, {"always", SpillAlways, true},
		{"never", SpillNever, true}, {"sometimes", "", false},
	} {
		got, err := ParseSpillMode(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseSpillMode(%q) = %q, %v", tc.in, got, err)
		}
	}
	_, err := Parse(context.Background(), bytes.NewReader(nil), "t.csv", Options{Spill: "sometimes"})
	if err == nil {
		t.Error("Parse with an unknown spill mode: no error")
	}
}

// TestSpillDirMissing: a temporary directory that does not exist is an
// error of the parse that names it.
func TestSpillDirMissing(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on this system")
	}
	dir := filepath.Join(t.TempDir(), "gone")
	_, err := Parse(context.Background(), bytes.NewReader([]byte("1, 1, a.c-1, Write, x\n")), "t.csv", Options{Spill: SpillAlways, SpillDir: dir})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(dir)) {
		t.Fatalf("err = %v, want one naming %s", err, dir)
	}
}

// TestPaceTrims: a scan that calls Model.Pace keeps the spilled events'
// resident pages within MaxResident by itself, without the trimmer (which
// a scan of the page cache outruns).
func TestPaceTrims(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on this system")
	}
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindFFT, Threads: 4, Vars: 4096, Events: 400_000}); err != nil {
		t.Fatal(err)
	}
	m, err := Parse(context.Background(), &buf, "fft.csv", Options{Spill: SpillAlways, SpillDir: t.TempDir(), MaxResident: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := m.spill
	close(s.stop) // no trimmer: only Pace trims
	<-s.done
	s.stop = nil
	size := len(m.Events) * int(eventSize) / 1024 // KB of events
	scan := func(pace bool) (grew int) {
		s.trimNow()
		base := residentFileKB(t)
		var sum int32
		for i := range m.Events {
			if pace {
				m.Pace(i)
			}
			sum += m.Events[i].Pos
		}
		t.Logf("pace %v: RssFile %d KB before the scan, %d KB after (sum %d)", pace, base, residentFileKB(t), sum)
		return residentFileKB(t) - base
	}
	if grew := scan(false); grew < size/2 {
		t.Skipf("a scan of %d KB of events made %d KB resident: this system does not count the mapping's pages", size, grew)
	}
	if grew := scan(true); grew > size/4 {
		t.Errorf("with Pace, a scan of %d KB of events left %d KB resident; want at most a quarter of them", size, grew)
	}

	// The accesses' copies variable by variable (about a hundred each):
	// Pace by the index of a variable's access never reaches a look, a
	// Pacer counts across the variables.
	size = 0
	for v := range m.Vars {
		size += len(m.Vars[v].access)
	}
	size = size * int(unsafe.Sizeof(Access{})) / 1024
	byVar := func(pacer bool) (grew int) {
		s.trimNow()
		base := residentFileKB(t)
		pc := m.Pacer()
		var sum int32
		for v := range m.Vars {
			for i := range m.Vars[v].access {
				if pacer {
					pc.Step()
				} else {
					m.Pace(i)
				}
				sum += m.Vars[v].access[i].Pos
			}
		}
		t.Logf("by variable, pacer %v: RssFile %d KB before the scan, %d KB after (sum %d)", pacer, base, residentFileKB(t), sum)
		return residentFileKB(t) - base
	}
	if grew := byVar(false); grew < size/2 {
		t.Errorf("by variable with Pace(index), %d KB of accesses made %d KB resident: want most of them (the test needs variables of fewer than %d accesses)", size, grew, paceEvents)
	}
	if grew := byVar(true); grew > size/4 {
		t.Errorf("by variable with a Pacer, a scan of %d KB of accesses left %d KB resident; want at most a quarter of them", size, grew)
	}
}

// TestSpillFileSmallFolios checks that a read that skips through a spill
// file written in order maps the kernel's fault-around (64 KB) at each
// step, not a large folio: newMappedFile writes under MADV_RANDOM. Written
// without it, the pages of a 128 MB file went into the page cache in
// folios of up to 2 MB, and Linux 6.18 mapped 1.9 MB at each step of a
// variable's accesses.
func TestSpillFileSmallFolios(t *testing.T) {
	if !spillSupported {
		t.Skip("no spilling on this system")
	}
	const size, stride = 128 << 20, 2 << 20
	mf, err := newMappedFile(t.TempDir(), size)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.close()
	if err := mf.reserve(size); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{1}, 1<<20)
	for off := 0; off < size; off += len(chunk) {
		copy(mf.data[off:], chunk)
	}
	mf.written()
	mf.release()
	base := residentFileKB(t)
	steps, sum := 0, 0
	for off := stride / 2; off < size; off += stride {
		sum += int(mf.data[off])
		steps++
	}
	grew := residentFileKB(t) - base
	t.Logf("%d steps %d MB apart: %d KB resident (sum %d)", steps, stride>>20, grew, sum)
	if grew > steps*256 {
		t.Errorf("%d steps %d MB apart through a spill file made %d KB resident, %d KB a step; want at most 256 KB a step (the kernel's fault-around is 64 KB)", steps, stride>>20, grew, grew/steps)
	}
}

// TestPaceIndexStrides checks that the reads by index (EventAt, Position)
// look at the resident size about once in paceEvents indexes whatever
// stride a loop jumps by: a test of the index alone (i%paceEvents == 0)
// never looks on a stride of 24 from an odd index.
func TestPaceIndexStrides(t *testing.T) {
	for _, stride := range []int{1, 2, 24, 1366, 4096, 1 << 16, 1<<16 + 1, 1 << 20} {
		for _, start := range []int{0, 1, 5} {
			const steps = 1 << 20
			looks := 0
			for k := range steps {
				if pacedIndex(int32((start + k*stride) % math.MaxInt32)) {
					looks++
				}
			}
			if want := steps / paceEvents; looks < want/2 || looks > want*2 {
				t.Errorf("stride %d from %d: %d looks in %d steps, want about %d", stride, start, looks, steps, want)
			}
		}
	}
}

// residentFileKB returns the process's resident file-backed memory
// (RssFile), and skips the test where it is not measured.
func residentFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}
