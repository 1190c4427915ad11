package report

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Color modes of --color.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// UseColor decides whether output to w is colored: always, never, or (auto)
// when w is a terminal, NO_COLOR is unset or empty (no-color.org) and TERM
// is not "dumb". getenv is os.Getenv outside tests.
func UseColor(mode string, w io.Writer, getenv func(string) string) (bool, error) {
	switch mode {
	case ColorAlways:
		return true, nil
	case ColorNever:
		return false, nil
	case ColorAuto, "":
		return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb" && IsTerminal(w), nil
	}
	return false, fmt.Errorf("unknown color mode %q: want auto, always or never", mode)
}
