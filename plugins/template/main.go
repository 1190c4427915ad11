// Command mcpredict-format-template is the template of an mcpredict
// trace-format plugin (see README.md next to it). Its format: one event
// per line, "THREAD ACTION OBJECT[ OBJECT2] FILE:LINE", separated by
// spaces, # comments, for example
//
//	1 Write x main.c:10
//	1 Create 2 main.c:11
//	2 Read x worker.c:5
package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
)

type format struct{}

// Info names the format: Name must be the NAME of mcpredict-format-NAME.
func (format) Info() formatplugin.Info {
	return formatplugin.Info{Name: "template", Version: "0.1.0", Description: "template: THREAD ACTION OBJECT [OBJECT2] FILE:LINE", Extensions: []string{"tmpl"}}
}

// Detect says yes only to content that is surely this format.
func (format) Detect(head []byte) bool {
	for _, line := range bytes.Split(head, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			_, err := parse(t)
			return err == nil
		}
	}
	return false
}

// Read emits one Event per line; a bad line is a Problem (mcpredict names
// the file and line, and --lenient skips it).
func (format) Read(ctx context.Context, in *formatplugin.Input) error {
	return in.Lines(func(n int, line []byte) error {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			return nil
		}
		e, err := parse(t)
		if err != nil {
			return in.Problem(n, err.Error())
		}
		e.TraceLine = n
		return in.Emit(e)
	})
}

func parse(line []byte) (formatplugin.Event, error) {
	var e formatplugin.Event
	f := bytes.Fields(line)
	if len(f) != 4 && len(f) != 5 {
		return e, fmt.Errorf("want THREAD ACTION OBJECT [OBJECT2] FILE:LINE, got %d fields", len(f))
	}
	loc := f[len(f)-1]
	i := bytes.LastIndexByte(loc, ':')
	n, err := strconv.Atoi(string(loc[i+1:]))
	if i <= 0 || err != nil {
		return e, fmt.Errorf("bad location %q: want FILE:LINE", loc)
	}
	e.Thread, e.Action, e.Object, e.File, e.Line = string(f[0]), string(f[1]), string(f[2]), string(loc[:i]), n
	if len(f) == 5 {
		e.Object2 = string(f[3])
	}
	if formatplugin.ActionCode(e.Action) == formatplugin.ActionProblem {
		return e, fmt.Errorf("unknown action %q", e.Action)
	}
	return e, nil
}

func main() { formatplugin.Serve(format{}) }
