package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpredict/mcpredict/internal/atomicfile"
)

// parseFlags parses flags that may appear before, between or after the
// positional arguments (users write `mcpredict run trace.csv --format json`).
// "--" ends flag parsing.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if helpRequested(fs) {
			return nil, flag.ErrHelp
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" { // only reached if "--" follows a positional
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseArgs is parseFlags for a command: when parsing ends the command
// (-h, or a bad flag, already reported by the FlagSet), ok is false and
// code is the exit status.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseFlags(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, exitOK, false
	case err != nil:
		return nil, exitUsage, false
	}
	return pos, 0, true
}

// newFlagSet returns a FlagSet whose -h prints the given synopsis and
// description before the flags, and whose errors print only the synopsis
// and where to read more: a mistyped flag should not bury its message
// under a hundred lines of flags.
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	h := &helpFlag{full: func() {
		fmt.Fprintf(fs.Output(), "Usage: mcpredict %s %s\n\n%s\n\nFlags:\n", name, synopsis, strings.TrimSpace(description))
		fs.PrintDefaults()
	}}
	fs.Var(h, "h", "print this help")
	fs.Var(h, "help", "print this help")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: mcpredict %s %s\nRun \"mcpredict %s -h\" for its flags.\n", name, synopsis, name)
	}
	return fs
}

// helpFlag is -h and -help: set, the parse ends with the full usage.
type helpFlag struct {
	set  bool
	full func()
}

func (h *helpFlag) String() string   { return "" }
func (h *helpFlag) IsBoolFlag() bool { return true }
func (h *helpFlag) Set(s string) error {
	h.set = s == "true"
	return nil
}

// helpRequested prints the full usage if -h or -help was given.
func helpRequested(fs *flag.FlagSet) bool {
	f := fs.Lookup("h")
	if f == nil {
		return false
	}
	h, ok := f.Value.(*helpFlag)
	if ok && h.set {
		h.full()
	}
	return ok && h.set
}

// listFlag is a comma-separated list flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// multiFlag collects every occurrence of a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// writeOutput writes with fn to stdout, or atomically to path, so that a
// failure never leaves a half report where a previous one was.
func writeOutput(path string, stdout io.Writer, fn func(io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(stdout)
	}
	return atomicfile.Write(path, 0o644, fn)
}
