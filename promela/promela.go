// Package promela writes a PairModel as a readable Promela program for Spin
// (DESIGN §5): the shared variable encoded as in the paper (read = tid,
// write = 64 + tid), lock owners, progress counters for causal order,
// region-boundary flags, one proctype per thread, and the LTL claims. Every
// statement carries a comment with its source lines and trace lines, and
// Emit returns the map from .pml line to model step that turns a Spin trail
// back into trace events.
//
// It does not run Spin and does not know the patterns: claims are given as
// ready-made LTL text.
package promela

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Claim is a named LTL property, e.g. {"P1_1", "!<> (...)"}.
type Claim struct {
	Name    string
	Formula string
	Comment string // optional, written above the claim
}

// Program is an emitted model.
type Program struct {
	Source []byte
	// Lines maps a 1-based .pml line to the step it executes.
	Lines map[int]tracemodel.StepRef
	// Claims are the claim names, in order.
	Claims []string
	// Statements is the number of statements of the processes; Spin's
	// search depth must be set above it.
	Statements int
}

// maxListed bounds the locations listed in one statement's comment.
const maxListed = 4

// Emit writes the Promela program of pm with the given claims.
func Emit(pm *tracemodel.PairModel, claims []Claim) *Program {
	w := &writer{lines: map[int]tracemodel.StepRef{}}
	if pm.Var2 != "" {
		w.printf("/* mcpredict model of the atomic set {%s, %s}\n", commentSafe(pm.Var), commentSafe(pm.Var2))
	} else {
		w.printf("/* mcpredict model of %s\n", commentSafe(pm.Var))
	}
	w.printf(" * trace:    %s\n", commentSafe(pm.Trace))
	for x, t := range pm.Threads {
		w.printf(" * t%d:       thread %d of the trace (handle %s)\n", x+1, t.ID, commentSafe(t.Handle))
	}
	w.printf(" *\n")
	w.printf(" * v packs the last access to the variable (bits 0-6: read by tN = N,\n")
	w.printf(" * write by tN = 64+N) and, since each thread's last access, whether it\n")
	w.printf(" * blocked on synchronization (brk: t1 %d, t2 %d) or released a lock\n", ltl.BrkBit(1), ltl.BrkBit(2))
	w.printf(" * after accessing v (pub: t1 %d, t2 %d). An access sets the value and\n", ltl.PubBit(1), ltl.PubBit(2))
	w.printf(" * clears its thread's flags in one assignment.\n")
	if pm.Var2 != "" {
		w.printf(" * v is the last access to either variable of the set: %d more for\n", ltl.VarBit)
		w.printf(" * an access of %s (y of the claims as written).\n", commentSafe(pm.Var2))
	}
	w.printf(" */\n")
	if pm.Broken {
		// A later part of its pair: both threads start past a boundary.
		w.printf("short v = %d; /* both threads past a region boundary: this part starts at a cut */\n", ltl.BrkBit(1)|ltl.BrkBit(2))
	} else {
		w.printf("short v = 0;\n")
	}
	progType := "byte"
	for x := 0; x < 2; x++ {
		for _, s := range pm.Steps[x] {
			if s.Progress > 255 {
				progType = "int"
			}
		}
	}
	w.printf("%s prog1 = 0; /* progress of t1 that t2 waits for (causal order) */\n", progType)
	w.printf("%s prog2 = 0; /* progress of t2 that t1 waits for (causal order) */\n", progType)
	hasRW := false
	if len(pm.Locks) > 0 {
		for i, l := range pm.Locks {
			kind := "mutex"
			if l.RW {
				kind, hasRW = "rwlock", true
			}
			w.printf("/* lock %d: %s %s */\n", i, kind, commentSafe(l.Name))
		}
		w.printf("byte owner[%d]; /* 0 free, else the thread holding it (writer for a rwlock) */\n", len(pm.Locks))
		if hasRW {
			w.printf("byte readers[%d]; /* rwlock readers: bit 1 = t1, bit 2 = t2 */\n", len(pm.Locks))
		}
	}
	sources := false
	for x := 0; x < 2; x++ {
		for _, s := range pm.Steps[x] {
			sources = sources || s.Source > 0
		}
	}
	if atomicWrites(pm) {
		w.printf("/* %d: the last access is the write of an atomic read-modify-write. */\n", ltl.AtomicBit)
	}
	if sources {
		w.printf("/* early (t1 %d, t2 %d): the thread read v before the write it observed in\n", ltl.EarlyBit(1), ltl.EarlyBit(2))
		w.printf(" * the recorded run; set for good, it ends the thread's claims as local. */\n")
	}
	stmts := 0
	for x := 0; x < 2; x++ {
		tid := x + 1
		t := pm.Threads[x]
		w.printf("\nproctype t%d() { /* thread %d, handle %s */\n", tid, t.ID, commentSafe(t.Handle))
		writing := map[int]bool{} // rwlocks held for writing
		for i, s := range pm.Steps[x] {
			w.lines[w.line] = tracemodel.StepRef{Thread: x, Index: i}
			w.printf("  %s /* %s */\n", statement(tid, s, writing, sources), describe(pm, s))
			stmts++
		}
		w.printf("}\n")
	}
	w.printf("\ninit { atomic { run t1(); run t2() } }\n")
	p := &Program{Lines: w.lines, Statements: stmts + 3}
	for _, c := range claims {
		w.printf("\n")
		if c.Comment != "" {
			w.printf("/* %s */\n", commentSafe(c.Comment))
		}
		w.printf("ltl %s { %s }\n", c.Name, c.Formula)
		p.Claims = append(p.Claims, c.Name)
	}
	p.Source = w.buf.Bytes()
	return p
}

// statement is the Promela of one step of thread tid, on one line. A step
// with a guard, a lock test or a progress mark is an atomic sequence whose
// first statement is its condition; it changes v at most once, so the
// claim sees no half-done step.
// With sources, accesses keep both threads' early bits.
func statement(tid int, s tracemodel.Step, writing map[int]bool, sources bool) string {
	other := 3 - tid
	var cond []string
	if s.Guard > 0 {
		cond = append(cond, fmt.Sprintf("prog%d >= %d", other, s.Guard))
	}
	var act []string
	l := s.Lock
	switch s.Kind {
	case tracemodel.StepRead, tracemodel.StepWrite:
		code := tid
		if s.Kind == tracemodel.StepWrite {
			code += 64
		}
		if s.Atomic {
			code |= ltl.AtomicBit
		}
		if s.Second {
			code += ltl.VarBit
		}
		// Keep the other thread's flags, clear this one's.
		keep := ltl.BrkBit(other) | ltl.PubBit(other)
		if sources {
			keep |= ltl.EarlyBit(1) | ltl.EarlyBit(2)
		}
		if s.Source > 0 {
			act = append(act, fmt.Sprintf("v = (v & %d) | %d | (prog%d < %d -> %d : 0)", keep, code, other, s.Source, ltl.EarlyBit(tid)))
		} else {
			act = append(act, fmt.Sprintf("v = (v & %d) | %d", keep, code))
		}
	case tracemodel.StepBoundary:
		act = append(act, fmt.Sprintf("v = v | %d", ltl.BrkBit(tid)))
	case tracemodel.StepPublish:
		act = append(act, fmt.Sprintf("v = v | %d", ltl.PubBit(tid)))
	case tracemodel.StepLock:
		cond = append(cond, fmt.Sprintf("owner[%d] == 0", l))
		act = append(act, fmt.Sprintf("owner[%d] = %d", l, tid))
	case tracemodel.StepUnlock:
		act = append(act, fmt.Sprintf("owner[%d] = 0", l))
	case tracemodel.StepWrLock:
		cond = append(cond, fmt.Sprintf("owner[%d] == 0", l), fmt.Sprintf("readers[%d] == 0", l))
		act = append(act, fmt.Sprintf("owner[%d] = %d", l, tid))
		writing[l] = true
	case tracemodel.StepRdLock:
		cond = append(cond, fmt.Sprintf("owner[%d] == 0", l))
		act = append(act, fmt.Sprintf("readers[%d] = readers[%d] | %d", l, l, tid))
	case tracemodel.StepRwUnlock:
		if writing[l] {
			act = append(act, fmt.Sprintf("owner[%d] = 0", l))
			delete(writing, l)
		} else {
			act = append(act, fmt.Sprintf("readers[%d] = readers[%d] & %d", l, l, 3-tid))
		}
	}
	if s.Progress > 0 {
		act = append(act, fmt.Sprintf("prog%d = %d", tid, s.Progress))
	}
	body := strings.Join(act, "; ")
	if len(cond) > 0 {
		body = strings.Join(cond, " && ") + " -> " + body
	}
	if len(cond) > 0 || len(act) > 1 {
		return "atomic { " + body + " }"
	}
	return body + ";"
}

// atomicWrites reports whether some step of pm is an atomic write.
func atomicWrites(pm *tracemodel.PairModel) bool {
	for x := 0; x < 2; x++ {
		for _, s := range pm.Steps[x] {
			if s.Atomic {
				return true
			}
		}
	}
	return false
}

// describe is the comment of a step: its action, in a set model its
// variable, and source locations.
func describe(pm *tracemodel.PairModel, s tracemodel.Step) string {
	var b strings.Builder
	b.WriteString(s.Kind.String())
	if pm.Var2 != "" && (s.Kind == tracemodel.StepRead || s.Kind == tracemodel.StepWrite) {
		v := pm.Var
		if s.Second {
			v = pm.Var2
		}
		b.WriteString(" " + commentSafe(v)) // which variable of the set
	}
	for i, e := range s.Events {
		if i == maxListed {
			fmt.Fprintf(&b, ", and %d more", len(s.Events)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		loc := "?"
		if e.File != "" || e.Line != 0 {
			loc = fmt.Sprintf("%s:%d", e.File, e.Line)
		}
		fmt.Fprintf(&b, " %s (trace line %d", commentSafe(loc), e.TraceLine)
		if e.Action != s.Kind.String() {
			fmt.Fprintf(&b, ", %s", e.Action)
		}
		if e.Atomic {
			b.WriteString(", atomic")
		}
		b.WriteString(")")
	}
	return b.String()
}

// commentSafe keeps arbitrary trace text from closing a Promela comment.
func commentSafe(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "*/", "* /"), "\n", " ")
}

type writer struct {
	buf   bytes.Buffer
	line  int // the 1-based line being written
	lines map[int]tracemodel.StepRef
}

func (w *writer) printf(format string, args ...any) {
	if w.line == 0 {
		w.line = 1
	}
	s := fmt.Sprintf(format, args...)
	w.buf.WriteString(s)
	w.line += strings.Count(s, "\n")
}
