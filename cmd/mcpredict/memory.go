package main

import (
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// registerMemory registers --spill, --temp-dir and --max-memory (run,
// batch, convert, model).
func (c *checkFlags) registerMemory(fs *flag.FlagSet) {
	fs.StringVar(&c.spill, "spill", string(tracemodel.SpillAuto), "where the trace's events are kept: auto (in memory up to 1 M events, then in a temporary file), always (a temporary file) or never (memory)")
	fs.StringVar(&c.tempDir, "temp-dir", "", "`DIR` of the temporary file of a spilled trace (default $TMPDIR or /tmp); it is unlinked at once, so nothing is left behind")
	fs.Var(&c.maxMemory, "max-memory", "memory target of the run, e.g. 1GiB, 512MiB: a quarter of it for the spilled trace's resident pages (default 512MiB), the rest Go's soft heap limit (default none); a model larger than that still gets the memory it needs, at the cost of more garbage collection")
}

// applyMemory checks --spill and sets the process's soft heap limit from
// --max-memory. It is the caller's: a process-wide setting made once, by
// the command.
func (c *checkFlags) applyMemory() error {
	// No soft heap limit by default: a heap of large models near it makes
	// the garbage collector take up to half the CPU (a 4 M-event server
	// trace ran for minutes instead of one).
	if _, err := tracemodel.ParseSpillMode(c.spill); err != nil {
		return &predict.UsageError{Msg: "--spill: " + err.Error()}
	}
	if n := c.maxMemory.n; n > 0 {
		debug.SetMemoryLimit(n - n/4)
	}
	return nil
}

// sizeFlag is a byte size: a number with an optional unit (B, K/KB/KiB,
// M/MB/MiB, G/GB/GiB, T/TB/TiB; all binary).
type sizeFlag struct{ n int64 }

func (f *sizeFlag) String() string {
	switch n := f.n; {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	}
	return strconv.FormatInt(f.n, 10)
}

func (f *sizeFlag) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	f.n = n
	return nil
}

func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	var shift uint
	switch unit {
	case "", "b":
	case "k", "kb", "kib":
		shift = 10
	case "m", "mb", "mib":
		shift = 20
	case "g", "gb", "gib":
		shift = 30
	case "t", "tb", "tib":
		shift = 40
	default:
		return 0, fmt.Errorf("unknown unit %q in %q: want B, KiB, MiB, GiB or TiB", t[i:], s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("want a size such as 512MiB or 2GiB")
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}

// humanBytes writes n bytes in MB or GB (decimal, as df -H).
func humanBytes(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}
