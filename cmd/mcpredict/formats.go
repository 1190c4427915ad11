package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	traceformats "github.com/mcpredict/mcpredict/formats"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// inputFlags choose the trace format (run, batch, serve, model, convert).
type inputFlags struct {
	format  string
	timeout time.Duration
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "input-format", "", "trace format `NAME`: csv or a plugin's (see mcpredict formats); default: detected by content, then by extension")
	fs.DurationVar(&f.timeout, "plugin-timeout", traceformats.DefaultTimeout, "time a format plugin may take to start or to answer one call (a batch of events) before it is killed")
}

// host returns a plugin host over the default plugin directories; the
// caller closes it (killing every plugin it started).
func (f *inputFlags) host(stderr io.Writer, cmd string) *traceformats.Host {
	return traceformats.NewHost(traceformats.Config{
		Dirs: traceformats.DefaultDirs(), Timeout: f.timeout,
		Warn: func(s string) { fmt.Fprintf(stderr, "mcpredict %s: warning: %s\n", cmd, s) },
	})
}

// open parses one trace in the chosen or detected format; no plugin
// process outlives the call.
func (f *inputFlags) open(ctx context.Context, path string, opts tracemodel.Options, stderr io.Writer, cmd string) (*tracemodel.Model, error) {
	h := f.host(stderr, cmd)
	defer h.Close()
	m, _, err := h.Open(ctx, path, f.format, opts)
	return m, err
}

const formatsDescription = `
Lists the trace formats mcpredict reads: the built-in csv and every plugin
found (executables named mcpredict-format-NAME in $MCPREDICT_PLUGIN_DIR, the
directory of the mcpredict binary, then PATH; the first of a NAME wins),
with their versions, file extensions and executables. Each plugin is
started and asked for its description.

Exit status: 0, or 3 if a plugin is broken (listed with its error).`

func cmdFormats(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("formats", "[flags]", formatsDescription, stderr)
	var inf inputFlags
	inf.register(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(stderr, "mcpredict formats: no arguments expected")
		return exitUsage
	}
	h := inf.host(stderr, "formats")
	defer h.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FORMAT\tVERSION\tEXTENSIONS\tDESCRIPTION\tEXECUTABLE")
	status := exitOK
	for _, f := range h.Formats(ctx) {
		path := f.Path
		if path == "" {
			path = "(built in)"
		}
		if f.Err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\tBROKEN: %s\t%s\n", f.Name, oneLine(f.Err.Error()), path)
			status = exitInternal
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Name, f.Version, strings.Join(f.Extensions, ","), f.Description, path)
	}
	tw.Flush()
	return status
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}
