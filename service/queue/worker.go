package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpredict/mcpredict/service/work"
)

// Worker takes items from the work stream, checks them and publishes their
// results.
type Worker struct {
	URL         string         // NATS server
	Name        string         // reported in results; default host:pid
	Concurrency int            // items checked at once; default 1
	Checkers    *work.Checkers // how items are checked
	Log         *slog.Logger

	// Shards, if set, projects and checks the items that are shards of a
	// job (work.Item.Shard), given the function that copies the job's
	// trace to a file; a worker without it leaves them to others.
	Shards func(ctx context.Context, it *work.Item, fetch func(ctx context.Context, dst string) error) ([]work.Result, error)

	// OnResult, if set, is called after each result is published (tests
	// and metrics).
	OnResult func(work.Result)

	checked atomic.Int64
}

// Checked returns the number of items this worker has completed.
func (w *Worker) Checked() int64 { return w.checked.Load() }

// Run processes items until ctx ends. It waits for the server to create the
// work stream, so workers may start first. An item being checked when ctx
// ends is not acked, so JetStream redelivers it to another worker.
func (w *Worker) Run(ctx context.Context) error {
	if w.Concurrency <= 0 {
		w.Concurrency = 1
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
	if w.Name == "" {
		host, _ := os.Hostname()
		w.Name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	nc, js, err := connect(w.URL, "mcpredict-worker "+w.Name, w.Log)
	if err != nil {
		return err
	}
	defer nc.Close()
	var cons jetstream.Consumer
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err = js.Consumer(actx, WorkStream, WorkConsumer)
		cancel()
		if err == nil {
			break
		}
		w.Log.Debug("waiting for the work stream", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
	ackWait := cons.CachedInfo().Config.AckWait
	w.Log.Info("worker ready", "name", w.Name, "concurrency", w.Concurrency, "ack_wait", ackWait)
	var wg sync.WaitGroup
	for range w.Concurrency {
		wg.Go(func() { w.loop(ctx, js, cons, ackWait) })
	}
	wg.Wait()
	return nil
}

// loop fetches one item at a time, so that a worker holds only the items it
// is checking: buffered items of a killed worker would wait for the ack
// wait before anyone else could take them.
func (w *Worker) loop(ctx context.Context, js jetstream.JetStream, cons jetstream.Consumer, ackWait time.Duration) {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := cons.Next(jetstream.FetchContext(fctx))
		cancel()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, jetstream.ErrNoMessages) {
				w.Log.Debug("fetching an item", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
			continue
		}
		w.handle(ctx, js, msg, ackWait)
	}
}

func (w *Worker) handle(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg, ackWait time.Duration) {
	var it work.Item
	if err := work.Decode(msg.Data(), &it); err != nil {
		w.Log.Error("dropping undecodable item", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	if it.Shard != nil {
		w.Log.Debug("checking shard", "job", it.Job, "task", it.Task, "tasks", len(it.Shard.Tasks), "delivery", deliveries(msg))
	} else {
		w.Log.Debug("checking model", "job", it.Job, "task", it.Task, "delivery", deliveries(msg))
	}
	// Keep the item ours while it is checked: Spin can take longer than
	// the ack wait on a big model.
	hctx, stopBeat := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(max(ackWait/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	var results []work.Result
	var err error
	switch {
	case it.Shard == nil:
		var res work.Result
		res, err = w.Checkers.Do(ctx, &it)
		results = []work.Result{res}
	case w.Shards == nil:
		stopBeat()
		w.Log.Warn("leaving a shard to a worker that projects", "job", it.Job, "task", it.Task)
		_ = msg.NakWithDelay(time.Second)
		return
	default:
		fetch := func(ctx context.Context, dst string) error { return fetchTrace(ctx, js, it.Shard.Trace, dst) }
		results, err = w.Shards(ctx, &it, fetch)
	}
	stopBeat()
	if errors.Is(err, errTraceGone) {
		w.Log.Info("dropping a shard of an ended job", "job", it.Job, "task", it.Task)
		_ = msg.Term()
		return
	}
	if err != nil {
		// Cancelled, or the trace could not be fetched: leave the item to
		// be redelivered.
		w.Log.Debug("item not done", "job", it.Job, "task", it.Task, "err", err)
		_ = msg.Nak()
		return
	}
	// Publish before acking: if this process dies in between, the item is
	// checked again and the duplicate results are harmless.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for i := range results {
		res := &results[i]
		res.Worker = w.Name
		data, err := work.Encode(res)
		if err != nil {
			w.Log.Error("encoding result", "job", res.Job, "task", res.Task, "err", err)
			_ = msg.Nak()
			return
		}
		id := fmt.Sprintf("%s.%d", res.Job, res.Task)
		if _, err := js.Publish(pctx, ResultSubject+res.Job, data, jetstream.WithMsgID(id), jetstream.WithRetryAttempts(20)); err != nil {
			w.Log.Error("publishing result", "job", res.Job, "task", res.Task, "err", err)
			_ = msg.Nak()
			return
		}
	}
	if err := msg.DoubleAck(pctx); err != nil {
		w.Log.Warn("acking item", "job", it.Job, "task", it.Task, "err", err)
	}
	for _, res := range results {
		w.checked.Add(1)
		if w.OnResult != nil {
			w.OnResult(res)
		}
	}
}

// deliveries returns how many times the message was delivered (1: first).
func deliveries(m jetstream.Msg) uint64 {
	md, err := m.Metadata()
	if err != nil {
		return 0
	}
	return md.NumDelivered
}
