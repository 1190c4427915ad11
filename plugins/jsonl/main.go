// Command mcpredict-format-jsonl is the mcpredict trace-format plugin of
// JSON-lines event logs: one JSON object per event. Schema: package
// formats/jsonl. mcpredict starts it; it is not run by hand.
package main

import (
	"context"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
	"github.com/mcpredict/mcpredict/formats/jsonl"
)

// version is the plugin's version (release builds: -ldflags "-X main.version=...").
var version = "1.0.0"

type format struct{}

func (format) Info() formatplugin.Info {
	return formatplugin.Info{Name: "jsonl", Version: version, Description: "JSON lines, one event object per line", Extensions: []string{"jsonl", "ndjson"}}
}

func (format) Detect(head []byte) bool { return jsonl.Detect(head) }

func (format) Read(ctx context.Context, in *formatplugin.Input) error {
	return in.Lines(func(n int, line []byte) error {
		if jsonl.Skip(line) {
			return nil
		}
		e, err := jsonl.Parse(line)
		if err != nil {
			return in.Problem(n, err.Error())
		}
		return in.Emit(formatplugin.Event{TraceLine: n, Thread: string(e.Thread), Action: e.Action, Object: string(e.Object), Object2: string(e.Object2), File: e.File, Line: e.Line})
	})
}

func main() { formatplugin.Serve(format{}) }
