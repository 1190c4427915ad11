package service_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/bugs"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service"
	"github.com/mcpredict/mcpredict/service/client"
	"github.com/mcpredict/mcpredict/service/store"
)

// exampleEvents is the number of events of example (bank.csv).
const exampleEvents = 22

// fakeReproduce stands for `mcpredict reproduce` (cmd/mcpredict wires the
// real one; TestServeReproduce there runs it on a real program): its
// first bug failed, one more run failed outside any window. hold, if set,
// is waited for first.
type fakeReproduce struct {
	hold chan struct{}
	err  error

	mu    sync.Mutex
	calls []service.ReproduceRequest
	ended []error // ctx.Err() of each call as it returned
}

func (f *fakeReproduce) reproduce(ctx context.Context, r service.ReproduceRequest) (*bugs.Report, error) {
	f.mu.Lock()
	f.calls = append(f.calls, r)
	f.mu.Unlock()
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
		}
	}
	f.mu.Lock()
	f.ended = append(f.ended, ctx.Err())
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.err != nil {
		return nil, f.err
	}
	rep := *r.Report
	rep.Bugs = append([]bugs.Bug(nil), r.Report.Bugs...)
	if len(rep.Bugs) > 0 {
		rep.Bugs[0].Reproduction = &bugs.Reproduction{Status: bugs.Reproduced, Failed: true, Observed: true, Runs: 1, Evidence: "exit status 1"}
	}
	rep.Failures = []bugs.Failure{{ID: "FAIL-1", Ended: "exit status 1", Source: "explore", Attribution: bugs.AttrNoHold, Runs: 1}}
	rep.Reproduce = &bugs.ReproduceSummary{Candidates: len(rep.Bugs), Tried: len(rep.Bugs), Runs: 2, FailedRuns: 2}
	return &rep, nil
}

func (f *fakeReproduce) requests() []service.ReproduceRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]service.ReproduceRequest(nil), f.calls...)
}

// TestReproduceJob: a job that asks for reproduce says how many events its
// trace has from its submission on; its reproduce is given the stored
// trace, the job's options, the assembled report and a budget; the
// stored report has the reproductions, and the job its counts.
func TestReproduceJob(t *testing.T) {
	f := &fakeReproduce{}
	e := start(t, service.Config{Workers: 2, Reproduce: f.reproduce, ReproduceBudget: time.Minute})
	ctx := ctxT(t, time.Minute)
	jo := service.JobOptions{Reproduce: true, ReproduceBudget: "30s", NoBoundaries: true}
	j, err := e.c.UploadFile(ctx, example, jo)
	if err != nil {
		t.Fatal(err)
	}
	planned := j.Total
	if j.Events != exampleEvents || planned == 0 || j.Reproduce == nil || j.Reproduce.State != service.ReproduceWaiting {
		t.Errorf("submitted job: events %d, total %d, reproduce %+v; want %d events, its models, reproduce waiting", j.Events, j.Total, j.Reproduce, exampleEvents)
	}
	j, err = e.c.Wait(ctx, j.ID, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := service.ReproduceStatus{State: service.ReproduceDone, Failed: 1, FailingRuns: 1}
	if j.Reproduce == nil || *j.Reproduce != want || j.Events != exampleEvents || j.Total != planned || j.Bugs == 0 {
		t.Errorf("done job: %+v, reproduce %+v; want reproduce %+v", j, j.Reproduce, want)
	}
	calls := f.requests()
	if len(calls) != 1 {
		t.Fatalf("reproduce called %d times, want once", len(calls))
	}
	r := calls[0]
	if r.Job != j.ID || r.Budget != 30*time.Second || !r.Options.Reproduce || !r.Options.NoBoundaries ||
		r.Report == nil || len(r.Report.Bugs) != j.Bugs || r.Report.Bugs[0].Reproduction != nil || !strings.Contains(r.OutDir, j.ID) {
		t.Errorf("reproduce request: %+v", r)
	}
	if info, err := os.Stat(r.OutDir); err != nil || !info.IsDir() {
		t.Errorf("out dir %s: %v", r.OutDir, err)
	}
	waitFor(t, ctx, "the stored trace removed once the job is done", func() bool {
		_, err := os.Stat(r.Trace)
		return errors.Is(err, os.ErrNotExist)
	})
	rep, err := e.c.Report(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Bugs) != j.Bugs || rep.Bugs[0].ReproductionState() != bugs.StateFailed || len(rep.Failures) != 1 || rep.Reproduce == nil || rep.Reproduce.Runs != 2 {
		t.Errorf("stored report: bugs %+v, failures %+v, reproduce %+v", rep.Bugs, rep.Failures, rep.Reproduce)
	}
	// A job without reproduce: its events too, and no reproduce part.
	j, err = e.c.UploadFile(ctx, example, service.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Events != exampleEvents || j.Reproduce != nil {
		t.Errorf("submitted job without reproduce: events %d, reproduce %+v", j.Events, j.Reproduce)
	}
	if j, err = e.c.Wait(ctx, j.ID, 10*time.Millisecond); err != nil || j.Reproduce != nil {
		t.Errorf("job without reproduce: %+v, %v", j.Reproduce, err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("reproduce called %d times, want once (only for the job that asked)", n)
	}
}

// TestReproduceRefused: reproduce is refused at submission, with the
// reason, by a server that runs no programs, over the server's budget,
// and when the server's check of the trace says no.
func TestReproduceRefused(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	none := start(t, service.Config{})
	f := &fakeReproduce{}
	e := start(t, service.Config{Reproduce: f.reproduce, ReproduceBudget: time.Minute, CheckReproduce: func(trace string) error {
		b, err := os.ReadFile(trace)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(string(b), "# argv:") {
			return &predict.UsageError{Msg: "the trace's header names no program"}
		}
		return nil
	}})
	named := writeFile(t, "named.csv", "# argv: [\"./prog\"]\n"+mustRead(t, example))
	tests := []struct {
		name  string
		c     *client.Client
		trace string
		jo    service.JobOptions
		want  string
	}{
		{"no programs", none.c, named, service.JobOptions{Reproduce: true}, "this server runs no programs"},
		{"over the budget", e.c, named, service.JobOptions{Reproduce: true, ReproduceBudget: "1h"}, "more than this server allows"},
		{"bad budget", e.c, named, service.JobOptions{Reproduce: true, ReproduceBudget: "soon"}, "want a duration"},
		{"budget alone", e.c, named, service.JobOptions{ReproduceBudget: "10s"}, "reproduce_budget without reproduce"},
		{"no program", e.c, example, service.JobOptions{Reproduce: true}, "names no program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.UploadFile(ctx, tt.trace, tt.jo)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Msg, tt.want) {
				t.Errorf("submission: %v, want 400 with %q", err, tt.want)
			}
		})
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("reproduce called %d times for refused jobs", n)
	}
	j, err := e.c.UploadFile(ctx, named, service.JobOptions{Reproduce: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(ctx, j.ID, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// TestReproduceFails: a reproduce that fails (the program is not there)
// fails its job with the message; the job keeps its event count.
func TestReproduceFails(t *testing.T) {
	f := &fakeReproduce{err: errors.New("the recorded program /nowhere/prog is not on this server")}
	e := start(t, service.Config{Reproduce: f.reproduce})
	ctx := ctxT(t, time.Minute)
	j, err := e.c.UploadFile(ctx, example, service.JobOptions{Reproduce: true})
	if err != nil {
		t.Fatal(err)
	}
	j, err = e.c.Wait(ctx, j.ID, 10*time.Millisecond)
	if !errors.Is(err, client.ErrJobFailed) || j.State != store.Failed ||
		j.Error != "reproduce: the recorded program /nowhere/prog is not on this server" || j.Events != exampleEvents {
		t.Fatalf("job %+v (%v), want failed naming the program, %d events", j, err, exampleEvents)
	}
	if j.Reproduce == nil || j.Reproduce.State != service.ReproduceStopped {
		t.Errorf("reproduce %+v, want stopped", j.Reproduce)
	}
	if f.budget(t) != 2*time.Minute {
		t.Errorf("default budget %s, want 2m", f.budget(t))
	}
}

func (f *fakeReproduce) budget(t *testing.T) time.Duration {
	t.Helper()
	rs := f.requests()
	if len(rs) == 0 {
		t.Fatal("reproduce not called")
	}
	return rs[0].Budget
}

// TestReproduceCancelAndResume: a job making its directed runs says so
// and can be cancelled (its runs stopped); a server stopped in the middle
// of them makes them again when it starts.
func TestReproduceCancelAndResume(t *testing.T) {
	ctx := ctxT(t, time.Minute)
	f := &fakeReproduce{hold: make(chan struct{})}
	cfg := service.Config{DataDir: t.TempDir(), Reproduce: f.reproduce}
	e := start(t, cfg)
	held := func(n int) {
		waitFor(t, ctx, "reproduce called", func() bool { return len(f.requests()) >= n })
	}
	j, err := e.c.UploadFile(ctx, example, service.JobOptions{Reproduce: true})
	if err != nil {
		t.Fatal(err)
	}
	held(1)
	if got, err := e.c.Job(ctx, j.ID); err != nil || got.State != store.Running || got.Reproduce == nil || got.Reproduce.State != service.ReproduceRunning {
		t.Fatalf("job making its runs: %+v, reproduce %+v (%v)", got, got.Reproduce, err)
	}
	if got, err := e.c.Cancel(ctx, j.ID); err != nil || got.State != store.Canceled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	waitFor(t, ctx, "the cancelled runs stopped", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.ended) == 1 && errors.Is(f.ended[0], context.Canceled)
	})

	// Stopped in the middle of the runs, then started again.
	j, err = e.c.UploadFile(ctx, example, service.JobOptions{Reproduce: true})
	if err != nil {
		t.Fatal(err)
	}
	held(2)
	e.stop()
	close(f.hold)
	e = start(t, cfg)
	got, err := e.c.Wait(ctx, j.ID, 10*time.Millisecond)
	if err != nil || got.Reproduce == nil || got.Reproduce.Failed != 1 {
		t.Fatalf("resumed job: %+v, reproduce %+v (%v)", got, got.Reproduce, err)
	}
	if n := len(f.requests()); n != 3 {
		t.Errorf("reproduce called %d times, want 3 (the cancelled job, the stopped one, again)", n)
	}
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
