package precision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// A Survey is what each analysis reported on one program's trace: unlike
// Predict's check, it has no expectations (the opt-in analyses take every
// function for a transaction and report what a program means as atomic or
// not); it says what a user of `--analysis` would read.
type Survey struct {
	Program *Program
	// Bugs by analysis name; an analysis that ran and reported nothing
	// has an empty entry.
	Bugs map[string][]Bug
	Err  error
	// Problems are the program's mcpredict:reports lines that the
	// recording did not meet (CheckReports).
	Problems []string
}

// SurveyTrace runs `bin run --analysis LIST --engine native --format json`
// on the recording and sorts its bugs by analysis.
func SurveyTrace(ctx context.Context, bin string, rec *Recording, analyses []string, opts Options) Survey {
	s := Survey{Program: rec.Program, Bugs: map[string][]Bug{}}
	args := []string{"run", "--format", "json", "--quiet", "--no-cache", "--engine", "native",
		"--analysis", strings.Join(analyses, ","), rec.Trace}
	out, err := run(ctx, bin, opts.Env, args...)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		s.Err = fmt.Errorf("%s: surveying: %w", rec.Program.Path, err)
		return s
	}
	var report struct {
		Bugs []struct {
			Bug
			Analysis string `json:"analysis"`
		} `json:"bugs"`
		Analyses []struct {
			Name string `json:"name"`
		} `json:"analyses"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		s.Err = fmt.Errorf("%s: mcpredict run: bad JSON report: %w", rec.Program.Path, err)
		return s
	}
	for _, a := range report.Analyses {
		s.Bugs[a.Name] = []Bug{}
	}
	for _, b := range report.Bugs {
		s.Bugs[b.Analysis] = append(s.Bugs[b.Analysis], b.Bug)
	}
	return s
}

// WriteSurvey writes a Markdown table: a row per program, a column per
// analysis, each cell the number of bugs and their kinds ("2 (P3, view)"),
// "none", or "-" when the analysis did not run.
func WriteSurvey(w io.Writer, analyses []string, rows []Survey) error {
	var b strings.Builder
	b.WriteString("| program |")
	for _, a := range analyses {
		fmt.Fprintf(&b, " %s |", a)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(analyses)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s |", r.Program.Name)
		for _, a := range analyses {
			bugs, ran := r.Bugs[a]
			switch {
			case r.Err != nil:
				b.WriteString(" error |")
			case !ran:
				b.WriteString(" - |")
			case len(bugs) == 0:
				b.WriteString(" none |")
			default:
				fmt.Fprintf(&b, " %d (%s) |", len(bugs), kindCounts(bugs))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kindCounts says how many bugs of each kind: "P3, 2× view".
func kindCounts(bugs []Bug) string {
	n := map[string]int{}
	var kinds []string
	for _, b := range bugs {
		if n[b.Pattern] == 0 {
			kinds = append(kinds, b.Pattern)
		}
		n[b.Pattern]++
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		if n[k] == 1 {
			parts[i] = k
		} else {
			parts[i] = fmt.Sprintf("%d× %s", n[k], k)
		}
	}
	return strings.Join(parts, ", ")
}

// CheckReports runs the analyses of the program's mcpredict:reports lines
// on the recording and returns the lines it does not meet, as messages
// naming the source line: missing, a kind of finding that was not
// reported; unexpected, a report of an analysis that should be silent
// ("none").
func CheckReports(ctx context.Context, bin string, rec *Recording, opts Options) (missing, unexpected []string, err error) {
	p := rec.Program
	if len(p.Reports) == 0 {
		return nil, nil, nil
	}
	var names []string
	for _, r := range p.Reports {
		if !slices.Contains(names, r.Analysis) {
			names = append(names, r.Analysis)
		}
	}
	s := SurveyTrace(ctx, bin, rec, names, opts)
	if s.Err != nil {
		return nil, nil, s.Err
	}
	for _, r := range p.Reports {
		bugs, ran := s.Bugs[r.Analysis]
		kinds := kindCounts(bugs)
		switch {
		case !ran:
			return nil, nil, fmt.Errorf("%s:%d: analysis %s did not run", p.Path, r.Line, r.Analysis)
		case r.Kind == "none" && len(bugs) > 0:
			unexpected = append(unexpected, fmt.Sprintf("%s:%d: %s reports %d bugs (%s), want none", p.Path, r.Line, r.Analysis, len(bugs), kinds))
		case r.Kind != "none" && !slices.ContainsFunc(bugs, func(b Bug) bool { return b.Pattern == r.Kind }):
			missing = append(missing, fmt.Sprintf("%s:%d: %s reports no %s (its bugs: %s)", p.Path, r.Line, r.Analysis, r.Kind, kinds))
		}
	}
	return missing, unexpected, nil
}
