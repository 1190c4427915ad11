package reproduce

import (
	"fmt"
	"slices"
)

// siteKey identifies the accesses of a step in a trace.
type siteKey struct {
	file string
	line int
	kind byte
}

func keyOf(st Step) siteKey { return siteKey{st.File, st.Line, st.kind()} }

// lockQuery asks which lock a thread held, outermost first, at a line of
// the recorded trace.
type lockQuery struct {
	thread string
	line   int
}

// recordedIndex is what one pass over the recorded trace tells the
// schedules: the trace lines of each L1 site (the occurrence of an
// instance's L1 among them), and the acquisition site of the outermost
// lock a remote thread held at its first remote access.
type recordedIndex struct {
	sites map[siteKey][]int
	locks map[lockQuery]*Step
	// lockSites are the sites where each queried thread took a lock,
	// anywhere in the recording.
	lockSites map[string]map[siteKey]bool
}

// indexRecording reads the recorded trace once for the given L1 sites and
// lock queries.
func indexRecording(path string, sites []siteKey, queries []lockQuery) (*recordedIndex, error) {
	ix := &recordedIndex{sites: map[siteKey][]int{}, locks: map[lockQuery]*Step{}, lockSites: map[string]map[siteKey]bool{}}
	want := map[siteKey]bool{}
	for _, k := range sites {
		want[k] = true
	}
	byThread := map[string][]int{} // the lines each query thread is asked at
	for _, q := range queries {
		byThread[q.thread] = append(byThread[q.thread], q.line)
		ix.locks[q] = nil
	}
	for _, ls := range byThread {
		slices.Sort(ls)
	}
	type held struct {
		obj  string
		step Step
	}
	holding := map[string][]held{}
	rc, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	err = scanEvents(rc, func(e event) error {
		k := e.kind()
		if (k == 'R' || k == 'W' || k == 'L') && len(want) > 0 {
			for _, sk := range []siteKey{{e.File, e.Line, k}, {e.File, e.Line, 'A'}} {
				if want[sk] {
					ix.sites[sk] = append(ix.sites[sk], e.TraceLine)
				}
			}
		}
		lines, asked := byThread[e.Thread]
		if !asked {
			return nil
		}
		switch k {
		case 'L':
			holding[e.Thread] = append(holding[e.Thread], held{e.Object, Step{Role: "PRE", Action: "Lock", File: e.File, Line: e.Line}})
			if ix.lockSites[e.Thread] == nil {
				ix.lockSites[e.Thread] = map[siteKey]bool{}
			}
			ix.lockSites[e.Thread][siteKey{e.File, e.Line, 'L'}] = true
		case 'U':
			hs := holding[e.Thread]
			for i := len(hs) - 1; i >= 0; i-- {
				if hs[i].obj == e.Object {
					holding[e.Thread] = append(hs[:i], hs[i+1:]...)
					break
				}
			}
		}
		if _, ok := slices.BinarySearch(lines, e.TraceLine); ok {
			if hs := holding[e.Thread]; len(hs) > 0 && hs[0].step.File != "" {
				st := hs[0].step
				ix.locks[lockQuery{e.Thread, e.TraceLine}] = &st
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	return ix, nil
}

// occurrence returns the 1-based rank of line among the recorded
// accesses of the site, and how many there are (0, 0 if none).
func (ix *recordedIndex) occurrence(k siteKey, line int) (rank, total int) {
	ls := ix.sites[k]
	i, _ := slices.BinarySearch(ls, line)
	return i + 1, len(ls)
}
