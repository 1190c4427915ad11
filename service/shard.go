package service

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/service/work"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Sharded jobs (Config.Shards): the workers project.
//
// Without shards the server parses, plans and projects every model of a
// job, one after another, and the workers check what it sends: on a
// server-like trace the projection is a third of the work, and it runs on
// one core of one machine. With shards the server still parses and plans
// (the plan is the job's list of tasks, and its report is assembled there),
// but it splits the tasks that have no result into shards of whole
// variables — a variable's data-flow order is computed once per shard —
// puts the trace in the queue's trace store, and queues one item per
// shard. A worker that takes one fetches the trace, parses it, resolves
// the job's options as the server does, projects the shard's tasks with
// predict.Projector, checks them, and publishes one result per task: the
// results of a model-by-model job, stored and assembled the same way, so
// the report is the same. A worker killed mid-shard leaves its item to be
// redelivered; the results it published already are stored once.

// dispatchShards queues the tasks of a job that have no result as
// Config.Shards shards.
func (s *Server) dispatchShards(ctx context.Context, aj *activeJob, m *tracemodel.Model, opts predict.Options, tasks []predict.Task, done map[int]bool, spec work.Spec, epoch string) error {
	j, err := s.st.Job(ctx, aj.id)
	if err != nil {
		return transient(err)
	}
	jo, err := decodeOptions(j.Options)
	if err != nil {
		return err
	}
	to := s.traceOptions(jo)
	if err := s.cfg.Queue.PutTrace(ctx, aj.id, j.TracePath); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return transient(err)
	}
	for _, sh := range splitShards(m, tasks, done, s.cfg.Shards) {
		sh.Trace, sh.Format, sh.Lenient, sh.StrictSync = aj.id, jo.InputFormat, to.Lenient, to.StrictSync
		sh.Project, sh.PartAccesses = opts.Project, opts.PartAccesses
		it := &work.Item{Job: aj.id, Task: sh.Indexes[0], Spec: spec, Shard: &sh}
		if !s.publish(ctx, it, epoch) {
			return nil
		}
	}
	return nil
}

// splitShards splits the tasks without a result into at most n shards:
// the tasks of one variable (or atomic set) stay together, and the
// variables go, largest first, to the shard with the fewest accesses so
// far (a task costs about its variable's accesses). Each shard lists its
// tasks in plan order.
func splitShards(m *tracemodel.Model, tasks []predict.Task, done map[int]bool, n int) []work.Shard {
	type group struct {
		idx  []int
		cost int
	}
	var groups []*group
	byVar := map[[2]int]*group{}
	for i, t := range tasks {
		if done[i] {
			continue
		}
		k := [2]int{t.Var, t.Var2}
		g := byVar[k]
		if g == nil {
			g = &group{}
			byVar[k] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
		g.cost += 1 + len(m.Vars[t.Var].Accesses)
		if t.Var2 != 0 {
			g.cost += len(m.Vars[t.Var2].Accesses)
		}
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return cmp.Compare(b.cost, a.cost) })
	n = max(1, min(n, len(groups)))
	shards := make([][]int, n)
	costs := make([]int, n)
	for _, g := range groups {
		k := 0
		for i := range costs {
			if costs[i] < costs[k] {
				k = i
			}
		}
		shards[k] = append(shards[k], g.idx...)
		costs[k] += g.cost
	}
	var out []work.Shard
	for _, idx := range shards {
		if len(idx) == 0 {
			continue
		}
		slices.Sort(idx)
		sh := work.Shard{Indexes: idx}
		for _, i := range idx {
			sh.Tasks = append(sh.Tasks, tasks[i])
		}
		out = append(out, sh)
	}
	return out
}

// ShardWorker projects and checks the shards of jobs on a worker
// (queue.Worker.Shards). What decides the models comes with the item; the
// worker needs only to read the trace's format.
type ShardWorker struct {
	// OpenTrace parses a trace as Config.OpenTrace (nil: CSV only).
	OpenTrace func(ctx context.Context, path, name, format string, opts tracemodel.Options) (*tracemodel.Model, string, error)
	Checkers  *work.Checkers
	// TempDir receives the fetched traces while they are parsed, and the
	// spilled ones ("": os.TempDir()).
	TempDir   string
	MaxEvents int // as Config.MaxEvents
}

// Do fetches the trace of shard item it, parses it, and projects and
// checks each of its tasks. Errors of the trace, the options or a check
// become the results' Err, which fails the job as the server would; only
// a cancelled ctx or a trace that cannot be fetched returns an error,
// because then the item must be tried again.
func (sw *ShardWorker) Do(ctx context.Context, it *work.Item, fetch func(ctx context.Context, dst string) error) (out []work.Result, err error) {
	sh := it.Shard
	start := time.Now()
	fail := func(msg string) []work.Result {
		out := make([]work.Result, len(sh.Indexes))
		for i, idx := range sh.Indexes {
			out[i] = work.Result{Job: it.Job, Task: idx, Err: msg}
		}
		return out
	}
	if len(sh.Tasks) != len(sh.Indexes) || len(sh.Tasks) == 0 {
		return fail("shard item with no tasks or with tasks and indexes that differ"), nil
	}
	// A panic is a bug for one job: it fails that job, not the worker
	// process and every other job with it (as work.Checkers.Do).
	defer func() {
		if p := recover(); p != nil {
			out, err = fail(fmt.Sprintf("internal error in a shard of job %s: panic: %v", it.Job, p)), nil
		}
	}()
	if it.Spec.Engine != predict.EngineNative && sw.Checkers.Tools.Spin == "" {
		return fail(fmt.Sprintf("engine %s needs spin and gcc, which this worker has not found", it.Spec.Engine)), nil
	}
	dir, err := os.MkdirTemp(sw.TempDir, "mcpredict-shard-*")
	if err != nil {
		return nil, fmt.Errorf("shard of job %s: %w", it.Job, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trace")
	if err := fetch(ctx, path); err != nil {
		return nil, err
	}
	topts := tracemodel.Options{Lenient: sh.Lenient, StrictSync: sh.StrictSync, MaxEvents: sw.MaxEvents, SpillDir: sw.TempDir}
	var m *tracemodel.Model
	switch {
	case sw.OpenTrace != nil:
		m, _, err = sw.OpenTrace(ctx, path, it.Job, sh.Format, topts)
	case sh.Format != "" && sh.Format != "csv":
		return fail(fmt.Sprintf("input_format %q: this worker reads only csv", sh.Format)), nil
	default:
		m, err = parseCSV(ctx, path, it.Job, topts)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return fail(err.Error()), nil
	}
	defer m.Close()
	for _, t := range sh.Tasks {
		if !sameVar(m, t.Var, t.VarName) || t.Var2 != 0 && !sameVar(m, t.Var2, t.Var2Name) {
			return fail(fmt.Sprintf("the worker's parse of the trace of job %s has no variable %s at id %d: the worker and the server differ in version", it.Job, t.Name(), t.Var)), nil
		}
	}
	opts := predict.Options{Models: it.Spec.Models, Engine: it.Spec.Engine, Project: sh.Project, PartAccesses: sh.PartAccesses}
	proj := predict.NewProjector(m, opts, sh.Tasks)
	checker := sw.Checkers.For(it.Spec)
	out = make([]work.Result, len(sh.Tasks))
	for i, t := range sh.Tasks {
		r := work.Result{Job: it.Job, Task: sh.Indexes[i]}
		pms, res, err := proj.Project(ctx, t)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			r.Err = fmt.Sprintf("projecting %s threads %d,%d: %v", t.Name(), t.T1, t.T2, err)
		case res != nil:
			r.Result = *res // decided while projecting, as run decides it
		default:
			pr, err := checker.CheckParts(ctx, pms)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				r.Err = err.Error()
			}
			r.Result = pr
		}
		out[i] = r
	}
	// The shard's time, spread over its tasks (metrics only).
	per := time.Since(start) / time.Duration(len(out))
	for i := range out {
		out[i].Elapsed = per
	}
	return out, nil
}

// sameVar reports whether variable id v of m is named name.
func sameVar(m *tracemodel.Model, v int, name string) bool {
	return v > 0 && v < len(m.Vars) && m.Vars[v].Name == name
}
