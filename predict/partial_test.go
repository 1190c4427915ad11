package predict

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/gen"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// TestInterruptedRunGivesPartialReport: a run cancelled after its first
// model returns the report of the models checked so far, marked
// incomplete, with the cancellation as its error.
func TestInterruptedRunGivesPartialReport(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.Write(context.Background(), &buf, gen.Config{Kind: gen.KindServer, Seed: 1, Threads: 4, Phases: 3, Bugs: 4}); err != nil {
		t.Fatal(err)
	}
	m, err := tracemodel.Parse(context.Background(), &buf, "server", tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := Plan(context.Background(), m, Options{})
	if len(tasks) < 4 {
		t.Fatalf("only %d models: the test needs several", len(tasks))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := Run(ctx, m, Options{Engine: EngineNative, Jobs: 1, Progress: func(p Progress) {
		if p.Done == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("err = %v, report %v: want the partial report and context.Canceled", err, rep != nil)
	}
	if !rep.Incomplete || rep.Stats.Models < 1 || rep.Stats.Models >= len(tasks) {
		t.Errorf("incomplete=%v models=%d of %d", rep.Incomplete, rep.Stats.Models, len(tasks))
	}
}

// TestUndecidedModels: models over their time limit are listed as
// undecided with the flag that raises it, and the run goes on.
func TestUndecidedModels(t *testing.T) {
	tools := spinTools(t)
	m, err := tracemodel.Open(context.Background(), filepath.Join("..", "examples", "bank.csv"), tracemodel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every thread pair's model, the two ordered ones too.
	rep, err := Run(context.Background(), m, Options{Engine: EngineSpin, Tools: tools, Jobs: 2, KeepOrderedPairs: true, KeepLockedPairs: true,
		Spin: spinrunner.Options{Timeout: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Undecided) != 3 || rep.Incomplete {
		t.Fatalf("undecided = %+v, incomplete %v: want all 3 models", rep.Undecided, rep.Incomplete)
	}
	for _, u := range rep.Undecided {
		if u.Var != "balance" || !strings.Contains(u.Hint, "--timeout") || !strings.Contains(u.Reason, "timed out") {
			t.Errorf("undecided %+v", u)
		}
	}
}
