package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpredict/mcpredict/ltl"
)

const patternsDescription = `
Lists the atomicity-violation patterns: id, name, definition in the pattern
language, and the LTL claim of each view (local thread t1 and t2) given to
Spin. Add --pattern to see how a pattern of your own compiles.

Pattern language: a sequence of terms R1 W1 A1 R2 W2 A2 (Read, Write, Any
access; 1 = local thread, 2 = remote thread), each optionally followed by *
(zero or more) or + (one or more).`

func cmdPatterns(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("patterns", "[--pattern 'W1 R2 W1']...", patternsDescription, stderr)
	var user multiFlag
	fs.Var(&user, "pattern", "also show this user pattern (repeatable)")
	verbose := fs.Bool("help-text", false, "also print each pattern's explanation")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "mcpredict patterns: no arguments expected (use --pattern)")
		return exitUsage
	}
	pats, err := selectPatterns(nil, user)
	if err != nil {
		return fail(stderr, "patterns", err)
	}
	// Every built-in, the two-variable ones too.
	pats = append(ltl.AllBuiltin(), pats[len(ltl.Builtin()):]...)
	for _, p := range pats {
		fmt.Fprintf(stdout, "%s  %s\n    pattern: %s\n", p.ID, p.Name, p.Source)
		for local := 1; local <= 2; local++ {
			fmt.Fprintf(stdout, "    %s\n", p.LTL(local))
		}
		if q := p.Precise(); q.Source != p.Source {
			fmt.Fprintf(stdout, "    precise semantics (the default; --semantics paper checks the pattern above): %s, W1 no atomic read-modify-write\n", q.Source)
			for local := 1; local <= 2; local++ {
				fmt.Fprintf(stdout, "    %s\n", q.LTL(local))
			}
		}
		if *verbose && p.Help != "" {
			fmt.Fprintf(stdout, "    %s\n", strings.ReplaceAll(p.Help, "\n", "\n    "))
		}
		fmt.Fprintln(stdout)
	}
	return exitOK
}
