package tracemodel

import "sort"

// snapLog is one thread's clock snapshots in an Order, by increasing
// position: snapshot i is the thread's clock from position pos[i] until
// the next snapshot.
//
// A trace of few threads (at most denseThreads) keeps each snapshot as a
// row of width components in one flat slice: a data-flow order of a server
// changes a thread's clock at about one event in five, and a persistent
// clock per snapshot (a 32-component leaf and its node, 168 bytes) made
// these orders most of the heap; a row of 9 threads is 36 bytes, holds no
// pointer for the garbage collector to follow, and is read without a
// search down a trie. A trace of more threads keeps the persistent clocks
// (vclock), whose snapshots share all but the path they change.
type snapLog struct {
	pos   []int32
	rows  []int32  // dense: len(pos)*width components
	vcs   []vclock // otherwise: one clock per snapshot
	width int      // components per row; 0: vcs
}

// denseThreads is the most threads whose snapshots are kept as rows: a
// row then fits the one leaf of their vclock.
const denseThreads = vcWidth

// newSnapLogs returns the empty logs of an order of nt threads.
func newSnapLogs(nt int) []snapLog {
	w := 0
	if nt <= denseThreads {
		w = nt
	}
	ls := make([]snapLog, nt)
	for i := range ls {
		ls[i].width = w
	}
	return ls
}

// len returns the number of snapshots.
func (l *snapLog) len() int { return len(l.pos) }

// add appends the snapshot of clock vc from position pos.
func (l *snapLog) add(pos int32, vc vclock) {
	l.pos = append(l.pos, pos)
	if l.width == 0 {
		l.vcs = append(l.vcs, vc)
		return
	}
	n := len(l.rows)
	l.rows = append(l.rows, make([]int32, l.width)...)
	vc.fill(l.rows[n:])
}

// prefix returns the log of the first n snapshots, sharing l's memory:
// appending to it copies.
func (l *snapLog) prefix(n int) snapLog {
	p := snapLog{pos: l.pos[:n:n], width: l.width}
	if l.width == 0 {
		p.vcs = l.vcs[:n:n]
	} else {
		p.rows = l.rows[: n*l.width : n*l.width]
	}
	return p
}

// at returns the index of the latest snapshot at or before pos, -1 if none.
func (l *snapLog) at(pos int32) int {
	return sort.Search(len(l.pos), func(i int) bool { return l.pos[i] > pos }) - 1
}

// get returns component c (0-based) of snapshot i.
func (l *snapLog) get(i, c int) int32 {
	if l.width == 0 {
		return l.vcs[i].get(c)
	}
	if c >= l.width {
		return 0
	}
	return l.rows[i*l.width+c]
}

// joinInto returns vc joined with snapshot i, and whether it changed.
func (l *snapLog) joinInto(vc vclock, i int) (vclock, bool) {
	if l.width == 0 {
		return vc.join(l.vcs[i])
	}
	return vc.joinDense(l.rows[i*l.width : (i+1)*l.width])
}
