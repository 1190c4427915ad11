// Package queue moves prediction work items to worker processes through NATS
// JetStream, and their results back to the server.
//
// Two streams are used. MCPREDICT_WORK is a work-queue stream on subjects
// mcpredict.work.<job>: each message is one work.Item, taken by exactly one
// worker of the durable pull consumer "workers" and removed when acked. A
// worker that dies without acking has its item redelivered after the ack
// wait; a slow worker extends the wait with in-progress acks. MCPREDICT_RESULTS
// is a work-queue stream on subjects mcpredict.results.<job> that the server
// consumes (durable consumer "server"); a worker publishes the result, waits
// for the stream's acknowledgement, and only then acks the item. Delivery is
// therefore at-least-once in both directions, and the server stores results
// keyed by (job, task), so a duplicate is harmless.
//
// The package also starts an embedded JetStream server for single-machine use
// and tests. It does not know about jobs, traces or the HTTP API.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpredict/mcpredict/service/work"
)

// Names of the streams, subjects and consumers.
const (
	WorkStream     = "MCPREDICT_WORK"
	WorkSubject    = "mcpredict.work."
	WorkConsumer   = "workers"
	ResultStream   = "MCPREDICT_RESULTS"
	ResultSubject  = "mcpredict.results."
	ResultConsumer = "server"
)

// MaxPayload is the largest message the embedded server accepts. Items are
// gzipped when large (work.Encode), so this holds the models of big traces;
// an external server needs max_payload at least as large for those.
const MaxPayload = 8 << 20

// DefaultAckWait is how long a worker may hold an item without an in-progress
// ack before it is redelivered.
const DefaultAckWait = 30 * time.Second

// Embedded is a JetStream server running inside this process.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts a JetStream server listening on listen (host:port;
// port 0 picks a free one) that keeps its streams under storeDir, so that
// queued items survive a restart.
func StartEmbedded(ctx context.Context, listen, storeDir string) (*Embedded, error) {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: bad listen address %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: bad port in %q", listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "mcpredict-embedded",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   storeDir,
		MaxPayload: MaxPayload,
		NoSigs:     true, // signals belong to the mcpredict process
		NoLog:      true,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	srv.Start()
	wait := 15 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	if !srv.ReadyForConnections(wait) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded NATS: not ready after %s (is %s in use?)", wait, listen)
	}
	return &Embedded{srv: srv}, nil
}

// URL is the client URL of the server.
func (e *Embedded) URL() string { return e.srv.ClientURL() }

// Shutdown stops the server and waits for it.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// connect connects to url, retrying for ever in the background: servers and
// workers start in any order (docker compose) and survive NATS restarts.
func connect(url, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("NATS reconnected", "url", c.ConnectedUrl()) }),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to NATS at %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("JetStream at %s: %w", url, err)
	}
	return nc, js, nil
}

// Queue is the server's side: it publishes items and consumes results.
type Queue struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	log     *slog.Logger
	opts    Options
	storage jetstream.StorageType

	mu      sync.Mutex // guards the streams, created again after a loss
	work    jetstream.Stream
	results jetstream.Stream
	renewed chan struct{} // closed when the streams are created again
}

// Options configure Open.
type Options struct {
	AckWait time.Duration // default DefaultAckWait
	// Memory keeps the streams in memory instead of files (tests).
	Memory bool
	Log    *slog.Logger
}

// Open connects to the NATS server at url and creates (or updates) the
// streams and consumers. It waits until JetStream answers or ctx ends.
func Open(ctx context.Context, url string, o Options) (*Queue, error) {
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	nc, js, err := connect(url, "mcpredict-server", o.Log)
	if err != nil {
		return nil, err
	}
	storage := jetstream.FileStorage
	if o.Memory {
		storage = jetstream.MemoryStorage
	}
	q := &Queue{nc: nc, js: js, log: o.Log, opts: o, storage: storage}
	if err := retry(ctx, q.ensure); err != nil {
		nc.Close()
		return nil, err
	}
	return q, nil
}

// ensure creates (or updates) the streams and consumers.
func (q *Queue) ensure(ctx context.Context) error {
	work, err := q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        WorkStream,
		Description: "mcpredict work items: one (trace, variable, thread pair) model each",
		Subjects:    []string{WorkSubject + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     q.storage,
	})
	if err != nil {
		return fmt.Errorf("creating stream %s: %w", WorkStream, err)
	}
	_, err = work.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:     WorkConsumer,
		Description: "mcpredict workers",
		AckPolicy:   jetstream.AckExplicitPolicy,
		AckWait:     q.opts.AckWait,
		// Every item must be checked eventually: redeliver without
		// limit. A job whose items keep failing is ended by cancelling
		// it, which purges them.
		MaxDeliver:    -1,
		MaxAckPending: -1,
	})
	if err != nil {
		return fmt.Errorf("creating consumer %s: %w", WorkConsumer, err)
	}
	results, err := q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        ResultStream,
		Description: "mcpredict results of work items",
		Subjects:    []string{ResultSubject + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     q.storage,
		// Deduplicates a result republished by a worker whose publish
		// acknowledgement was lost; the store deduplicates the rest.
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("creating stream %s: %w", ResultStream, err)
	}
	_, err = results.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       ResultConsumer,
		Description:   "the mcpredict server",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    -1,
		MaxAckPending: 1000,
	})
	if err != nil {
		return fmt.Errorf("creating consumer %s: %w", ResultConsumer, err)
	}
	q.mu.Lock()
	q.work, q.results = work, results
	if q.renewed != nil {
		close(q.renewed)
	}
	q.renewed = make(chan struct{})
	q.mu.Unlock()
	return nil
}

func (q *Queue) streams() (work, results jetstream.Stream) {
	work, results, _ = q.streamsRenewed()
	return work, results
}

// streamsRenewed also returns the channel closed when the streams are
// created again.
func (q *Queue) streamsRenewed() (work, results jetstream.Stream, renewed <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.work, q.results, q.renewed
}

// Check tells whether JetStream answers and the streams exist, creating
// them again if they were lost (a NATS server restarted without its
// storage).
func (q *Queue) Check(ctx context.Context) error {
	if !q.nc.IsConnected() {
		return fmt.Errorf("NATS: %s", q.nc.Status())
	}
	work, results := q.streams()
	_, err := work.Info(ctx)
	if err == nil {
		_, err = results.Info(ctx)
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		q.log.Warn("JetStream streams lost; creating them again")
		err = q.ensure(ctx)
	}
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	return nil
}

// Backlog returns the number of messages of a job in the two streams: its
// items not yet acked by a worker and its results not yet consumed. A job
// with results missing and no backlog has lost its items.
func (q *Queue) Backlog(ctx context.Context, job string) (int, error) {
	work, results := q.streams()
	n := 0
	for _, s := range []struct {
		st      jetstream.Stream
		subject string
	}{{work, WorkSubject + job}, {results, ResultSubject + job}} {
		info, err := s.st.Info(ctx, jetstream.WithSubjectFilter(s.subject))
		if err != nil {
			return 0, fmt.Errorf("backlog of job %s: %w", job, err)
		}
		for _, c := range info.State.Subjects {
			n += int(c)
		}
	}
	return n, nil
}

// WorkState describes the work consumer: items not yet delivered, items
// delivered and not yet acked, and pull requests of idle workers.
type WorkState struct {
	Pending, AckPending, Waiting int
}

// State returns the state of the work consumer.
func (q *Queue) State(ctx context.Context) (WorkState, error) {
	work, _ := q.streams()
	cons, err := work.Consumer(ctx, WorkConsumer)
	if err != nil {
		return WorkState{}, fmt.Errorf("work consumer: %w", err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return WorkState{}, fmt.Errorf("work consumer: %w", err)
	}
	return WorkState{Pending: int(info.NumPending), AckPending: info.NumAckPending, Waiting: info.NumWaiting}, nil
}

// retry calls fn until it succeeds or ctx ends, waiting a little between
// attempts: JetStream is briefly unavailable while a server starts.
func retry(ctx context.Context, fn func(context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := fn(actx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Connected reports whether the connection to NATS is up.
func (q *Queue) Connected() bool { return q.nc.IsConnected() }

// Close closes the connection.
func (q *Queue) Close() { q.nc.Close() }

// Publish adds an item to the work stream. epoch distinguishes publications
// of the same task by different server runs: the message id deduplicates
// retries of one publication only, never a deliberate republication.
func (q *Queue) Publish(ctx context.Context, it *work.Item, epoch string) error {
	data, err := work.Encode(it)
	if err != nil {
		return fmt.Errorf("encoding item %s/%d: %w", it.Job, it.Task, err)
	}
	id := fmt.Sprintf("%s.%d.%s", it.Job, it.Task, epoch)
	_, err = q.js.Publish(ctx, WorkSubject+it.Job, data, jetstream.WithMsgID(id), jetstream.WithRetryAttempts(20))
	if err != nil {
		return fmt.Errorf("publishing item %s/%d (%d bytes): %w", it.Job, it.Task, len(data), err)
	}
	return nil
}

// PurgeJob removes the job's items that no worker has acked yet. Items being
// checked still produce results, which the server drops or stores
// idempotently.
func (q *Queue) PurgeJob(ctx context.Context, job string) error {
	work, _ := q.streams()
	if err := work.Purge(ctx, jetstream.WithPurgeSubject(WorkSubject+job)); err != nil {
		return fmt.Errorf("purging items of job %s: %w", job, err)
	}
	return nil
}

// Pending returns the number of items in the work stream (queued or being
// checked).
func (q *Queue) Pending(ctx context.Context) (int, error) {
	work, _ := q.streams()
	info, err := work.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("work stream info: %w", err)
	}
	return int(info.State.Msgs), nil
}

// ConsumeResults calls fn for every result until ctx ends. A result is acked
// once fn returns nil; when fn fails the result is redelivered a little later.
// Undecodable results are logged and dropped. Losing the consumer (a NATS
// server restarted without its storage) starts consuming again once Check
// has created it again.
func (q *Queue) ConsumeResults(ctx context.Context, fn func(context.Context, work.Result) error) error {
	handle := func(m jetstream.Msg) {
		var r work.Result
		if err := work.Decode(m.Data(), &r); err != nil {
			q.log.Error("dropping undecodable result", "subject", m.Subject(), "err", err)
			_ = m.Term()
			return
		}
		if err := fn(ctx, r); err != nil {
			q.log.Error("storing result failed; will retry", "job", r.Job, "task", r.Task, "err", err)
			_ = m.NakWithDelay(time.Second)
			return
		}
		if err := m.Ack(); err != nil {
			// Redelivered later and stored again: harmless.
			q.log.Warn("acking result", "job", r.Job, "task", r.Task, "err", err)
		}
	}
	for ctx.Err() == nil {
		_, results, renewed := q.streamsRenewed()
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err := results.Consumer(actx, ResultConsumer)
		cancel()
		if err != nil {
			q.log.Debug("results consumer", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		lost := make(chan struct{})
		var once sync.Once
		cc, err := cons.Consume(handle, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
				once.Do(func() { close(lost) })
			}
			if !errors.Is(err, jetstream.ErrNoHeartbeat) {
				q.log.Debug("results consumer", "err", err)
			}
		}))
		if err != nil {
			return fmt.Errorf("consuming results: %w", err)
		}
		select {
		case <-ctx.Done():
			cc.Drain()
		case <-lost:
			q.log.Warn("results consumer lost; consuming again")
			cc.Stop()
		case <-renewed:
			cc.Stop()
		}
		<-cc.Closed()
	}
	return nil
}
