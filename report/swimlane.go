package report

import (
	"fmt"
	"strings"

	"github.com/mcpredict/mcpredict/bugs"
)

// Swimlane geometry, in SVG user units (CSS pixels). Labels use a 12px
// monospace font, about charW wide per character, so that lane widths can
// be computed without measuring text.
const (
	laneGutter  = 44 // left column with step numbers
	laneHeaderH = 50 // thread names
	laneRowH    = 44 // one interleaving step
	laneGap     = 56 // between lanes, where the arrows cross
	laneMinW    = 240
	laneBoxPad  = 12 // box inset from the lane edge
	laneTextX   = 34 // label offset inside a box, after the step badge
	charW       = 7.4
	accessBoxH  = 36
	syncBoxH    = 22
)

// swimlane is the laid-out diagram of one violation instance: one lane per
// thread (local first), one row per interleaving step, in order.
type swimlane struct {
	Width, Height int
	LaneH         int // height of the lane backgrounds
	Title         string
	Lanes         []lane
	Steps         []laneStep
	Arrows        []laneArrow
	Held          []laneSpan
}

type lane struct {
	X, W   int
	Name   string // "thread 201"
	Detail string // "local · deposit()"
}

type laneStep struct {
	N         int // 1-based step number
	NumY      int // baseline of the step number
	Y         int // top of the row
	BoxX      int
	BoxY      int
	BoxW      int
	BoxH      int
	TextY     int // baseline of the first label line
	Text2Y    int // baseline of the second label line (accesses)
	BadgeX    int // center of the instance badge
	BadgeY    int
	Class     string // CSS classes of the box
	Label     string
	Sub       string // location and function, second line
	Badge     int    // position in the pattern instance, 0 = not part of it
	Tooltip   string
	TextX     int
	SyncLabel bool // one-line label (synchronization step)
}

// laneArrow links consecutive accesses of the pattern instance.
type laneArrow struct{ Path string }

// laneSpan is a lock held by a thread, drawn as a bar beside its lane.
type laneSpan struct{ X, Y, H int }

// layoutSwimlane lays out the interleaving of v.
func layoutSwimlane(v bugs.Violation) swimlane {
	handles := []string{v.Local.Handle, v.Remote.Handle}
	roles := []string{"local", "remote"}
	laneOf := func(a bugs.Access) int {
		if a.Handle == v.Local.Handle {
			return 0
		}
		return 1
	}
	// A lane whose steps are all in one function names it in its header
	// instead of in every box.
	var laneFns [2][]string
	for _, a := range v.Interleaving {
		if l := laneOf(a); a.Func != "" && !containsString(laneFns[l], a.Func) {
			laneFns[l] = append(laneFns[l], a.Func)
		}
	}
	showFunc := func(a bugs.Access) bool { return len(laneFns[laneOf(a)]) > 1 }
	// Lane width: the longest label of either lane, so both lanes match.
	w := laneMinW
	for _, a := range v.Interleaving {
		label, sub := stepLabels(a, v.Var, showFunc(a))
		w = max(w, int(float64(max(len([]rune(label)), len([]rune(sub))))*charW)+laneTextX+2*laneBoxPad+8)
	}
	s := swimlane{
		Width:  laneGutter + 2*w + laneGap + 16,
		Height: laneHeaderH + len(v.Interleaving)*laneRowH + 16,
		LaneH:  laneHeaderH + len(v.Interleaving)*laneRowH + 4,
		Title: fmt.Sprintf("Interleaving of thread %s (local) and thread %s (remote) on %s",
			v.Local.Handle, v.Remote.Handle, v.Var),
	}
	if v.Elided > 0 {
		s.Title += fmt.Sprintf(" (the %d earlier steps of the witness are not shown)", v.Elided)
	}
	for i := range 2 {
		detail := roles[i]
		if len(laneFns[i]) == 1 {
			detail += " · in " + laneFns[i][0] + "()"
		}
		s.Lanes = append(s.Lanes, lane{X: laneGutter + i*(w+laneGap), W: w, Name: "thread " + handles[i], Detail: detail})
	}
	badge := 0
	open := [2][]int{} // rows of the locks each lane holds
	prev := -1         // index in s.Steps of the previous instance step
	for i, a := range v.Interleaving {
		ln := s.Lanes[laneOf(a)]
		y := laneHeaderH + i*laneRowH
		st := laneStep{N: i + 1, Y: y, NumY: y + laneRowH/2 + 4, BoxX: ln.X + laneBoxPad, BoxW: ln.W - 2*laneBoxPad}
		st.Label, st.Sub = stepLabels(a, v.Var, showFunc(a))
		isAccess := a.Action == "Read" || a.Action == "Write"
		switch {
		case isAccess:
			st.BoxH = accessBoxH
			st.Class = "ev " + strings.ToLower(a.Action)
		default:
			st.BoxH = syncBoxH
			st.Class = "ev sync"
			st.SyncLabel = true
		}
		st.BoxY = y + (laneRowH-st.BoxH)/2
		if a.Instance {
			badge++
			st.Badge = badge
			st.Class += " inst"
		}
		st.BadgeX, st.BadgeY = st.BoxX+17, st.BoxY+st.BoxH/2
		st.TextX = st.BoxX + laneTextX
		if st.SyncLabel {
			st.TextX = st.BoxX + 12
			st.TextY = st.BoxY + st.BoxH/2 + 4
		} else {
			st.TextY = st.BoxY + 15
			st.Text2Y = st.BoxY + 29
		}
		st.Tooltip = fmt.Sprintf("step %d, trace line %d: thread %s %s %s", i+1, a.TraceLine, a.Handle, a.Action, a.Location())
		if a.Func != "" {
			st.Tooltip += " in " + a.Func + "()"
		}
		switch a.Action {
		case "Lock", "TryLock", "RdLock", "WrLock":
			open[laneOf(a)] = append(open[laneOf(a)], i)
		case "Unlock", "RwUnlock":
			if o := open[laneOf(a)]; len(o) > 0 {
				from := o[len(o)-1]
				open[laneOf(a)] = o[:len(o)-1]
				s.Held = append(s.Held, heldSpan(ln, from, i))
			}
		}
		s.Steps = append(s.Steps, st)
		if a.Instance {
			if prev >= 0 {
				s.Arrows = append(s.Arrows, laneArrow{Path: arrowPath(s.Steps[prev], st)})
			}
			prev = len(s.Steps) - 1
		}
	}
	// A lock still held where the interleaving ends.
	for l, o := range open {
		for _, from := range o {
			s.Held = append(s.Held, heldSpan(s.Lanes[l], from, len(v.Interleaving)-1))
		}
	}
	return s
}

func heldSpan(ln lane, from, to int) laneSpan {
	y := laneHeaderH + from*laneRowH + laneRowH/2
	return laneSpan{X: ln.X + 3, Y: y, H: (to - from) * laneRowH}
}

// arrowPath is an SVG path from one instance step to the next: a curve
// across the gap between lanes, or a short drop within a lane.
func arrowPath(from, to laneStep) string {
	if from.BoxX == to.BoxX {
		x := from.BoxX + from.BoxW - 18
		return fmt.Sprintf("M %d %d L %d %d", x, from.BoxY+from.BoxH, x, to.BoxY-2)
	}
	fy, ty := from.BoxY+from.BoxH/2, to.BoxY+to.BoxH/2
	if from.BoxX < to.BoxX { // left lane to right lane
		fx, tx := from.BoxX+from.BoxW, to.BoxX-2
		return fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", fx, fy, fx+laneGap/2, fy, tx-laneGap/2, ty, tx, ty)
	}
	fx, tx := from.BoxX, to.BoxX+to.BoxW+2
	return fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", fx, fy, fx-laneGap/2, fy, tx+laneGap/2, ty, tx, ty)
}

// stepLabels are the two label lines of a step: what happened, and where.
func stepLabels(a bugs.Access, varName string, withFunc bool) (label, sub string) {
	sub = a.Location()
	if withFunc && a.Func != "" {
		sub += " · " + a.Func + "()"
	}
	if a.Action == "Read" || a.Action == "Write" {
		if a.Object != "" {
			varName = a.Object // an access of an atomic set names its variable
		}
		return a.Action + " " + varName, sub
	}
	return a.Action + "  " + sub, ""
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
