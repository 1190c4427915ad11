package precision

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Row is one program's outcome: its result, or the error that stopped it.
type Row struct {
	Program *Program
	Result  *Result
	Err     error
}

// OK reports whether the program met its expectations.
func (r Row) OK() bool { return r.Err == nil && r.Result != nil && r.Result.OK() }

// AllOK reports whether every row is OK.
func AllOK(rows []Row) bool {
	for _, r := range rows {
		if !r.OK() {
			return false
		}
	}
	return true
}

// WriteTable writes the rows as a Markdown table with a line of totals.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| program | kind | expected | found | unexpected reports | record time | check time |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|\n")
	var idioms, bugs, expected, found, unexpected, failed, errs, noisyIdioms int
	// Expected bugs of programs whose recorded run did not interleave the
	// accesses (mcpredict:notexhibited): predicted, not observed.
	var unseen, unseenFound int
	var rec, check time.Duration
	for _, r := range rows {
		kind := r.Program.Kind()
		if kind == "idiom" {
			idioms++
		} else {
			bugs++
		}
		expected += len(r.Program.Expect)
		if !r.OK() {
			failed++
		}
		if r.Err != nil {
			errs++
			fmt.Fprintf(&b, "| %s | %s | %d | error | error | - | - |\n", r.Program.Name, kind, len(r.Program.Expect))
			continue
		}
		res := r.Result
		found += res.Found()
		if r.Program.NotExhibited != "" {
			unseen += res.Expected()
			unseenFound += res.Found()
		}
		unexpected += len(res.Unexpected)
		if kind == "idiom" && len(res.Unexpected) > 0 {
			noisyIdioms++
		}
		rec += res.Record
		check += res.Check
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %s |\n", r.Program.Name, kind,
			res.Expected(), res.Found(), len(res.Unexpected), seconds(res.Record), seconds(res.Check))
	}
	fmt.Fprintf(&b, "| **total** (%d programs) | %d idioms, %d bugs | %d | %d | %d | %s | %s |\n",
		len(rows), idioms, bugs, expected, found, unexpected, seconds(rec), seconds(check))
	fmt.Fprintf(&b, "\n%d of %d programs as expected; %d of %d idioms with reports; %d of %d expected bugs found (%d of %d that did not happen in the recorded run); %d unexpected reports",
		len(rows)-failed, len(rows), noisyIdioms, idioms, found, expected, unseenFound, unseen, unexpected)
	if errs > 0 {
		fmt.Fprintf(&b, "; %d errors", errs)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteDetails lists, for each program that is not as expected, the
// error, the expected bugs not found and the unexpected reports.
func WriteDetails(w io.Writer, rows []Row) error {
	var b strings.Builder
	for _, r := range rows {
		if r.OK() {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%s):\n", r.Program.Path, r.Program.Kind())
		if r.Err != nil {
			fmt.Fprintf(&b, "  error: %s\n", strings.ReplaceAll(r.Err.Error(), "\n", "\n    "))
			continue
		}
		for _, e := range r.Result.Missing {
			fmt.Fprintf(&b, "  not found (line %d): %s\n", e.Line, e)
		}
		for _, u := range r.Result.Unexpected {
			fmt.Fprintf(&b, "  unexpected: %s\n", u)
		}
		for _, u := range r.Result.Allowed {
			fmt.Fprintf(&b, "  allowed: %s\n", u)
		}
		if r.Result.Attempts > 1 {
			fmt.Fprintf(&b, "  (recorded %d times)\n", r.Result.Attempts)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}
