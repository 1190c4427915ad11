// Package work defines the unit of distributed prediction work — one model
// of a trace: (variable, thread pair) or (atomic set, thread pair), or a
// shard of a job's models that the worker projects itself — and how a
// worker checks it.
//
// An Item of one model carries everything a worker needs (the PairModel,
// the patterns and the engine settings), so that the worker never sees the
// trace. An Item of a shard carries the tasks and names the job's trace in
// the queue's trace store; the worker parses it and projects the tasks
// (package service's ShardWorker). A Result is
// keyed by (job, task index): storing it twice under that key is harmless,
// which is what makes at-least-once delivery safe.
//
// The package does not move items anywhere (see packages service and
// service/queue) and does not plan or assemble reports (package predict does).
package work

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/mcpredict/mcpredict/cache"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/native"
	"github.com/mcpredict/mcpredict/predict"
	"github.com/mcpredict/mcpredict/spinrunner"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// Spec is the part of predict.Options that decides the verdicts of a
// PairModel: the patterns of each kind of models, and the engine.
// Projection options are not part of it: they are applied before the
// PairModel exists; nor are the analyses the models are for, which the
// server stamps on their violations when it assembles the report.
type Spec struct {
	Models []predict.Models `json:"models"`
	Engine predict.Engine   `json:"engine"`
	// Confirm is the auto engine's confirmation mode; "" is ConfirmOne
	// (omitted so that the keys of existing specs do not change).
	Confirm predict.Confirm `json:"confirm,omitempty"`
	// Timeout is the Spin time limit per model (0: none); MemoryMB is pan's
	// memory limit (0: spinrunner's default).
	Timeout  time.Duration `json:"timeout_ns,omitempty"`
	MemoryMB int           `json:"memory_mb,omitempty"`
	// MaxInstances bounds the instances listed per claim of a model (0:
	// the default), as predict.Options.MaxInstances.
	MaxInstances int `json:"max_instances,omitempty"`
}

// SpecOf extracts the Spec of run options. Pattern help texts are dropped:
// they are long and never reach a report.
func SpecOf(o predict.Options) Spec {
	s := Spec{Engine: o.Engine, Confirm: o.Confirm, Timeout: o.Spin.Timeout, MemoryMB: o.Spin.MemoryMB, MaxInstances: o.MaxInstances}
	if s.MaxInstances == native.DefaultMaxInstances {
		s.MaxInstances = 0
	}
	if s.Confirm == predict.ConfirmOne {
		s.Confirm = ""
	}
	if s.Engine == "" {
		s.Engine = predict.EngineAuto
	}
	models := o.Models
	if models == nil {
		models = []predict.Models{{Kind: predict.VariableModels, Patterns: ltl.Builtin()}}
	}
	for _, ms := range models {
		sm := predict.Models{Kind: ms.Kind, Patterns: []ltl.Pattern{}}
		for _, p := range ms.Patterns {
			p.Help = ""
			sm.Patterns = append(sm.Patterns, p)
		}
		s.Models = append(s.Models, sm)
	}
	return s
}

// Key identifies a Spec: two specs with the same key give the same verdicts.
func (s Spec) Key() string {
	b, _ := json.Marshal(s) // plain data: cannot fail
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Item is one model to check.
type Item struct {
	Job  string `json:"job"`
	Task int    `json:"task"`
	Spec Spec   `json:"spec"`
	// Models are the parts of the task's model to check, in part order
	// (predict.Projector.Project); the result merges them.
	Models []*tracemodel.PairModel `json:"models"`
	// Shard, if set, makes the item a shard of the job's tasks, which
	// the worker projects from the trace (Models is empty; Task is the
	// shard's first task, which names the item).
	Shard *Shard `json:"shard,omitempty"`
}

// Shard is a share of a job's tasks that a worker projects and checks
// itself, giving one Result per task. It carries how the server parsed the
// trace and how it would have projected the models, so that the worker's
// models are the server's.
type Shard struct {
	// Trace is the name of the job's trace in the queue's trace store.
	Trace string `json:"trace"`
	// Format is the trace's format ("": CSV), as the server read it;
	// Lenient and StrictSync are the parser's options.
	Format     string `json:"format,omitempty"`
	Lenient    bool   `json:"lenient,omitempty"`
	StrictSync bool   `json:"strict_sync,omitempty"`
	// Project and PartAccesses are predict.Options' (the patterns and the
	// engine are the Spec's).
	Project      tracemodel.ProjectOptions `json:"project"`
	PartAccesses int                       `json:"part_accesses,omitempty"`
	// Tasks are the shard's tasks and their indexes in the job's plan.
	// A worker's parse of the trace must give the same variable ids
	// (it checks their names).
	Tasks   []predict.Task `json:"tasks"`
	Indexes []int          `json:"indexes"`
}

// Result is the outcome of an Item. Exactly one of Err and Result is
// meaningful: a tool failure makes the job fail, as it makes `mcpredict run`
// fail.
type Result struct {
	Job     string             `json:"job"`
	Task    int                `json:"task"`
	Result  predict.PairResult `json:"result"`
	Err     string             `json:"error,omitempty"`
	Elapsed time.Duration      `json:"elapsed_ns"` // time spent checking
	Worker  string             `json:"worker,omitempty"`
}

// Checkers builds and keeps one predict.Checker per Spec, so that a worker
// serving many jobs does not rebuild claims for every item. It is safe for
// concurrent use.
type Checkers struct {
	// Tools are the local spin and C compiler; they are found by the worker,
	// not sent with the item, because paths differ between machines.
	Tools    spinrunner.Tools
	KeepDir  string     // spinrunner.Options.KeepDir, for debugging
	MemoryMB int        // used when the Spec leaves it 0
	Cache    *cache.Dir // optional verdict cache of this machine

	mu sync.Mutex
	m  map[string]*predict.Checker
}

// maxCheckers bounds the cache: specs differ only by user patterns and
// engine settings, so a handful is normal; past the bound the cache is reset.
const maxCheckers = 64

// For returns the checker of a spec.
func (c *Checkers) For(s Spec) *predict.Checker {
	key := s.Key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.m[key]; ok {
		return ch
	}
	if c.m == nil || len(c.m) >= maxCheckers {
		c.m = map[string]*predict.Checker{}
	}
	mem := s.MemoryMB
	if mem == 0 {
		mem = c.MemoryMB
	}
	ch := predict.NewChecker(predict.Options{
		Models:  s.Models,
		Engine:  s.Engine,
		Confirm: s.Confirm,
		Jobs:    1,
		// The instances of a claim, and so the report, depend on it.
		MaxInstances: s.MaxInstances,
		Spin:         spinrunner.Options{Timeout: s.Timeout, MemoryMB: mem, KeepDir: c.KeepDir},
		Tools:        c.Tools,
		Cache:        c.Cache,
	})
	c.m[key] = ch
	return ch
}

// Do checks an item. Errors of the check are returned in Result.Err, so the
// caller always has a result to deliver; only a cancelled ctx gives a
// non-nil error, because then the item was not checked and must be retried.
func (c *Checkers) Do(ctx context.Context, it *Item) (r Result, err error) {
	start := time.Now()
	r = Result{Job: it.Job, Task: it.Task}
	// A panic in a checker is a bug for one model: it fails that job, not
	// the worker process and every other job with it.
	defer func() {
		if p := recover(); p != nil {
			r.Err, err = fmt.Sprintf("internal error checking %s: panic: %v", predict.ModelName(it.Models[0]), p), nil
		}
	}()
	if len(it.Models) == 0 || slices.Contains(it.Models, nil) {
		r.Err = "work item without a model"
		return r, nil
	}
	if it.Spec.Engine != predict.EngineNative && c.Tools.Spin == "" {
		r.Err = fmt.Sprintf("engine %s needs spin and gcc, which this worker has not found", it.Spec.Engine)
		return r, nil
	}
	res, err := c.For(it.Spec).CheckParts(ctx, it.Models)
	r.Elapsed = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return r, fmt.Errorf("checking %s task %d: %w", it.Job, it.Task, ctx.Err())
		}
		r.Err = err.Error()
		return r, nil
	}
	r.Result = res
	return r, nil
}

// gzipMagic starts every encoded payload that was compressed; JSON never
// starts with it.
const gzipMagic = "\x1f\x8b"

// compressAbove is the payload size from which Encode compresses: models of
// big traces repeat file names and actions, which gzip shrinks ~10x, and a
// NATS message is limited to the server's max_payload (1 MiB by default).
const compressAbove = 16 << 10

// Encode marshals v as JSON, gzipped when large.
func Encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < compressAbove {
		return b, nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // valid level: cannot fail
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode unmarshals a payload written by Encode.
func Decode(data []byte, v any) error {
	if bytes.HasPrefix(data, []byte(gzipMagic)) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("decoding payload: %w", err)
		}
		defer zr.Close()
		if data, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("decoding payload: %w", err)
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding payload: %w", err)
	}
	return nil
}
