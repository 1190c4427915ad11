// Command mcpredict-format-std is the mcpredict trace-format plugin of
// RAPID's STD format ("T1|r(x)|loc"), as written by RAPID's tools and the
// RoadRunner-based loggers. Syntax and mapping: package formats/std.
// mcpredict starts it; it is not run by hand.
package main

import (
	"context"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
	"github.com/mcpredict/mcpredict/formats/std"
)

// version is the plugin's version (release builds: -ldflags "-X main.version=...").
var version = "1.0.0"

type format struct{}

func (format) Info() formatplugin.Info {
	return formatplugin.Info{Name: "std", Version: version, Description: "RAPID's STD format (THREAD|OP(DECOR)|LOC)", Extensions: []string{"std"}}
}

func (format) Detect(head []byte) bool { return std.Detect(head) }

func (format) Read(ctx context.Context, in *formatplugin.Input) error {
	actions := map[string][]byte{}
	return in.Lines(func(n int, line []byte) error {
		if std.Skip(line) {
			return nil
		}
		if f, action, file, ln, ok := std.Fast(line); ok {
			a, seen := actions[action]
			if !seen {
				a = []byte(action)
				actions[action] = a
			}
			return in.EmitBytes(n, f.Thread, a, f.Object, nil, file, ln)
		}
		e, err := std.Parse(line)
		if err != nil {
			return in.Problem(n, err.Error())
		}
		return in.Emit(formatplugin.Event{TraceLine: n, Thread: e.Thread, Action: e.Action, Object: e.Object, Object2: e.Object2, File: e.File, Line: e.Line})
	})
}

func main() { formatplugin.Serve(format{}) }
