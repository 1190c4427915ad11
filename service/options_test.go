package service_test

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/analysis"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service"
)

// TestJobOptionsReachTheServer submits jobs with every job option set, as
// an upload (options in the query) and by path (a JSON body), and checks
// that the server resolves exactly those options: `mcpredict batch
// --server` must not drop a flag on the way.
func TestJobOptionsReachTheServer(t *testing.T) {
	partners, confidence := 3, 0.5
	want := service.JobOptions{
		Vars: []string{"balance"}, Threads: []string{"201", "202"}, Patterns: []string{"P1", "P3"},
		UserPatterns: []string{"W1 R2 W1"}, Engine: "native", Semantics: "paper", NoBoundaries: true,
		ExcludeVars: []string{"tmp*"}, Confirm: "none", Lenient: true, StrictSync: true, InputFormat: "csv",
		Analysis: "mcpatom,deadlock", NoDataflow: true, NoScope: true, NoHandoffs: true, NoWaitConditions: true,
		NoObservedReads: true, MaxInstances: 7, AtomicSetsOn: true, AtomicSets: []string{"lo,hi"},
		SetPartners: &partners, SetConfidence: &confidence, Atomic: []string{"deposit"}, NotAtomic: []string{"main"},
		BlockConflict: true, DeadlockMaxCycle: 3, ValueFlow: "invocation",
	}
	var (
		mu   sync.Mutex
		seen []service.JobOptions
	)
	e := start(t, service.Config{Resolve: func(o service.JobOptions) (predict.Options, []*analysis.Analyzer, error) {
		mu.Lock()
		seen = append(seen, o)
		mu.Unlock()
		o.Patterns, o.Analysis = nil, "" // what the tests' resolver can run
		return resolve(o)
	}, AllowPaths: []string{filepath.Join("..", "examples")}})
	ctx := ctxT(t, time.Minute)
	trace := filepath.Join("..", "examples", "bank.csv")
	if _, err := e.c.UploadFile(ctx, trace, want); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(trace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.SubmitPath(ctx, abs, "bank.csv", want); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 {
		t.Fatalf("the resolver saw %d jobs, want the upload's and the path's", len(seen))
	}
	for i, got := range seen {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("job options resolved (%d):\n got %+v\nwant %+v", i, got, want)
		}
	}
}
