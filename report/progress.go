package report

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress draws a one-line progress bar for a terminal:
//
//	[=========>          ]  45/100 models  3 violations  ETA 12s
//
// It redraws in place with a carriage return, at most every Interval, so
// that thousands of fast models do not flood a slow terminal; the last
// update is always drawn. It is not safe for concurrent use: the caller
// serializes updates (predict calls its Progress callback serially).
type Progress struct {
	w        io.Writer
	now      func() time.Time
	interval time.Duration
	width    int // of the bar itself, in cells
	last     time.Time
	drawn    bool
	stage    string // what done/total count; "" is models
}

// Stage names what the next updates count, e.g. "models confirmed by
// Spin"; the empty stage is "models".
func (p *Progress) Stage(s string) {
	if s != p.stage {
		p.stage, p.drawn = s, false
	}
}

// NewProgress returns a bar that writes to w (a terminal). now is time.Now
// outside tests.
func NewProgress(w io.Writer, now func() time.Time) *Progress {
	return &Progress{w: w, now: now, interval: 100 * time.Millisecond, width: 24}
}

// Update draws the state after a model: done of total models, violations
// found so far, and the start of the run for the ETA.
func (p *Progress) Update(done, total, violations int, started time.Time) {
	now := p.now()
	if p.drawn && done < total && now.Sub(p.last) < p.interval {
		return
	}
	p.last, p.drawn = now, true
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(done, total, violations, now.Sub(started)))
}

// Reading draws the state of reading a trace: read of size bytes (of the
// file, compressed or not), since started.
func (p *Progress) Reading(name string, read, size int64, started time.Time) {
	now := p.now()
	if p.drawn && read < size && now.Sub(p.last) < p.interval {
		return
	}
	p.last, p.drawn = now, true
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.readingLine(name, read, size, now.Sub(started)))
}

// readingLine renders Reading's bar: "[====>   ] reading t.csv.gz  12/40 MB  ETA 3s".
func (p *Progress) readingLine(name string, read, size int64, elapsed time.Duration) string {
	filled := 0
	if size > 0 {
		filled = int(min(read, size) * int64(p.width) / size)
	}
	bar := strings.Repeat("=", filled)
	if filled < p.width {
		bar += ">" + strings.Repeat(" ", p.width-filled-1)
	}
	const mb = 1 << 20
	s := fmt.Sprintf("[%s] reading %s  %d/%d MB", bar, name, read/mb, (size+mb-1)/mb)
	if read > 0 && read < size {
		eta := time.Duration(float64(elapsed) / float64(read) * float64(size-read))
		s += "  ETA " + roundETA(eta).String()
	}
	return s
}

// line renders the bar without the carriage return and erase sequence.
func (p *Progress) line(done, total, violations int, elapsed time.Duration) string {
	filled := 0
	if total > 0 {
		filled = done * p.width / total
	}
	bar := strings.Repeat("=", filled)
	if filled < p.width {
		bar += ">" + strings.Repeat(" ", p.width-filled-1)
	}
	stage := p.stage
	if stage == "" {
		stage = "models"
	}
	s := fmt.Sprintf("[%s] %*d/%d %s  %d %s", bar, len(fmt.Sprint(total)), done, total, stage, violations, plural(violations, "violation", "violations"))
	if done > 0 && done < total {
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		s += "  ETA " + roundETA(eta).String()
	}
	return s
}

// roundETA keeps an ETA readable: whole seconds, or tenths under 10s.
func roundETA(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// Done erases the bar, leaving the line for what follows.
func (p *Progress) Done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
