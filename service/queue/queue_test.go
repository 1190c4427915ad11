package queue

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpredict/mcpredict/service/work"
)

// TestQueue publishes items of two jobs, purges one job, and checks that a
// worker turns the other's items into results on the results stream.
func TestQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	emb, err := StartEmbedded(ctx, "127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Shutdown()
	q, err := Open(ctx, emb.URL(), Options{AckWait: time.Second, Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if !q.Connected() {
		t.Error("not connected")
	}
	for _, it := range []work.Item{{Job: "a", Task: 0}, {Job: "a", Task: 1}, {Job: "a", Task: 2}, {Job: "b", Task: 0}, {Job: "b", Task: 1}} {
		if err := q.Publish(ctx, &it, "e1"); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := q.Pending(ctx); err != nil || n != 5 {
		t.Fatalf("Pending = %d, %v; want 5", n, err)
	}
	if err := q.PurgeJob(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := q.Pending(ctx); n != 2 {
		t.Fatalf("Pending after purging a = %d, want 2", n)
	}
	var (
		mu  sync.Mutex
		got = map[int]work.Result{}
	)
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		q.ConsumeResults(cctx, func(_ context.Context, r work.Result) error {
			mu.Lock()
			got[r.Task] = r
			mu.Unlock()
			return nil
		})
	})
	w := &Worker{URL: emb.URL(), Name: "w", Concurrency: 2, Checkers: &work.Checkers{}}
	wg.Go(func() { w.Run(cctx) })
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("results: %v", got)
		case <-time.After(10 * time.Millisecond):
		}
	}
	stop()
	wg.Wait()
	for task, r := range got {
		// The items carry no model: each result is an error result, which
		// is what a worker must deliver rather than crash or retry.
		if r.Job != "b" || r.Worker != "w" || r.Err == "" {
			t.Errorf("result %d: %+v", task, r)
		}
	}
	if n, _ := q.Pending(ctx); n != 0 {
		t.Errorf("items left after the worker: %d", n)
	}
}
