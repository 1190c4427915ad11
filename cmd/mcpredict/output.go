package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/report"
)

// outputFlags choose how a report is filtered (baseline, suppressions) and
// rendered, and what the user sees while it is made.
type outputFlags struct {
	format, out, srcRoot, color string
	baseline, suppressions      string
	quiet, noWarnings, expand   bool
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.format, "format", "text", "report format: text, json, sarif or html")
	fs.StringVar(&o.out, "o", "", "write the report to `FILE` instead of standard output")
	fs.StringVar(&o.srcRoot, "src-root", "", "`DIR` the trace's source paths are relative to (the repository): source snippets in html; sarif paths relative to it, absolute ones under it too (uriBaseId %SRCROOT%)")
	fs.StringVar(&o.color, "color", report.ColorAuto, "color the text report: auto (when writing to a terminal), always or never")
	fs.StringVar(&o.baseline, "baseline", "", "report only bugs that are not in the JSON report `BASE.json` (counted in the summary)")
	fs.StringVar(&o.suppressions, "suppressions", "", "suppress the bugs matched by the rules in `FILE` (see docs/formats.md)")
	registerQuiet(fs, &o.quiet, "no progress bar or progress lines on standard error (warnings are still printed: --no-warnings)")
	fs.BoolVar(&o.noWarnings, "no-warnings", false, "do not print the report's warnings on standard error (json, sarif and html reports still carry them)")
	fs.BoolVar(&o.expand, "expand", false, "list every bug of a group in the text and html reports, not only the first "+fmt.Sprint(report.FirstShown))
}

// filters are the baseline and suppression rules, loaded before the run so
// that a bad file fails fast.
type filters struct {
	base     *bugs.Report
	baseName string
	rules    []bugs.SuppressionRule
}

// load checks the flags and reads the baseline and suppressions files. Any
// problem is the user's: a *predict.UsageError (exit status 2).
func (o *outputFlags) load() (filters, error) {
	var f filters
	if _, ok := formats(report.Options{}, false)[o.format]; !ok {
		return f, &predict.UsageError{Msg: fmt.Sprintf("unknown --format %q: want text, json, sarif or html", o.format)}
	}
	if _, err := report.UseColor(o.color, io.Discard, func(string) string { return "" }); err != nil {
		return f, &predict.UsageError{Msg: "--color: " + err.Error()}
	}
	if o.srcRoot != "" {
		if fi, err := os.Stat(o.srcRoot); err != nil || !fi.IsDir() {
			return f, &predict.UsageError{Msg: fmt.Sprintf("--src-root %s: not a directory", o.srcRoot)}
		}
	}
	if o.baseline != "" {
		base, err := readReport(o.baseline)
		if err != nil {
			return f, &predict.UsageError{Msg: "--baseline: " + err.Error()}
		}
		f.base, f.baseName = base, o.baseline
	}
	if o.suppressions != "" {
		file, err := os.Open(o.suppressions)
		if err != nil {
			return f, &predict.UsageError{Msg: "--suppressions: " + err.Error()}
		}
		defer file.Close()
		f.rules, err = bugs.ParseSuppressions(file, o.suppressions)
		if err != nil {
			return f, &predict.UsageError{Msg: "--suppressions: " + err.Error()}
		}
	}
	return f, nil
}

// apply leaves the baseline's bugs out of rep, then marks the suppressed
// ones (in that order, so that the suppressed count is about new bugs).
func (f filters) apply(rep *bugs.Report) {
	if f.base != nil {
		bugs.ApplyBaseline(rep, f.base, f.baseName)
	}
	if len(f.rules) > 0 {
		bugs.Suppress(rep, f.rules)
	}
}

// progress returns the callback that draws a progress bar on stderr, and
// the function that erases it; both do nothing unless stderr is a terminal
// and --quiet is off.
func (o *outputFlags) progress(stderr io.Writer) (func(predict.Progress), func()) {
	if o.quiet || !report.IsTerminal(stderr) {
		return nil, func() {}
	}
	bar := report.NewProgress(stderr, time.Now)
	return func(p predict.Progress) {
		if p.Confirming {
			bar.Stage("models confirmed by Spin")
		}
		bar.Update(p.Done, p.Total, p.Violations, p.Started)
	}, bar.Done
}

// readingProgress is the progress bar of reading the trace file path
// (its bytes read of its size), on a terminal without --quiet, and the
// function that erases it; nil and a no-op otherwise, and for standard
// input, whose size is unknown.
func (o *outputFlags) readingProgress(stderr io.Writer, path string) (func(int64), func()) {
	if o.quiet || path == "-" || !report.IsTerminal(stderr) {
		return nil, func() {}
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, func() {}
	}
	bar := report.NewProgress(stderr, time.Now)
	started, name, size := time.Now(), filepath.Base(path), fi.Size()
	return func(read int64) { bar.Reading(name, read, size, started) }, bar.Done
}

// warn prints the report's warnings to stderr unless --no-warnings
// (--quiet hides progress, not warnings).
func (o *outputFlags) warn(stderr io.Writer, cmd string, rep *bugs.Report) {
	if o.noWarnings {
		return
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "mcpredict %s: warning: %s\n", cmd, w)
	}
}

// write renders rep in the chosen format to -o FILE or stdout.
func (o *outputFlags) write(stdout io.Writer, rep *bugs.Report, pats []ltl.Pattern) error {
	color := false
	if o.format == "text" {
		toFile := o.out != "" && o.out != "-"
		switch {
		case o.color == report.ColorAlways:
			color = true
		case o.color == report.ColorAuto && !toFile:
			color, _ = report.UseColor(report.ColorAuto, stdout, os.Getenv)
		}
	}
	render := formats(report.Options{Patterns: pats, SrcRoot: o.srcRoot, Expand: o.expand}, color)[o.format]
	return writeOutput(o.out, stdout, func(w io.Writer) error { return render(w, rep) })
}

// readReport reads a JSON report written by mcpredict run --format json.
func readReport(path string) (*bugs.Report, error) { return bugs.ReadJSONFile(path) }

// registerQuiet registers --quiet and its short form -q on v: the same
// names in every command that shows progress (run, batch, reproduce).
func registerQuiet(fs *flag.FlagSet, v *bool, usage string) {
	fs.BoolVar(v, "quiet", false, usage)
	fs.BoolVar(v, "q", false, "same as --quiet")
}

// takeFlags removes from args the occurrences of the flags named, which
// take a value and are not registered in fs (so that -h does not list
// them: old names kept for scripts, and names a command refuses with a
// reason), and returns the rest of args and the value of each flag found
// (the last, if repeated). Every spelling is recognized: -name, --name,
// -name=V, --name=V. Arguments after "--", and the values of fs's flags,
// are left alone.
func takeFlags(fs *flag.FlagSet, args []string, names ...string) (rest []string, taken map[string]string, err error) {
	taken = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if slices.Contains(names, name) {
			if !hasValue {
				if i+1 == len(args) {
					return nil, nil, &predict.UsageError{Msg: "flag needs an argument: -" + name}
				}
				i++
				value = args[i]
			}
			taken[name] = value
			continue
		}
		rest = append(rest, a)
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			i++ // the flag's value, which may start with "-"
			rest = append(rest, args[i])
		}
	}
	return rest, taken, nil
}

// isBoolFlag reports whether a flag takes no value (-flag alone).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
