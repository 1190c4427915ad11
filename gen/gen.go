// Package gen writes synthetic execution traces in the trace format of
// DESIGN §2, for benchmarks, scale tests and differential tests of the
// checkers.
//
// Three kinds of workload are generated:
//
//   - "fft": barrier-separated phases in the style of SPLASH-2 FFT. Worker
//     threads write their own slice of a double-buffered array and read a
//     partner's slice of the other buffer, then meet at a barrier; at the
//     end each adds into a shared sum under a lock. There is no atomicity
//     violation by construction (with region boundaries, DESIGN §3),
//     unless Config.Bugs adds counters incremented without a lock.
//   - "server": a main thread hands requests to worker threads through a
//     queue protected by a mutex and a condition variable
//     (while (count == 0) wait), in epochs separated by a barrier, and the
//     workers update statistics under locks. Config.Bugs seeded atomicity
//     bugs are added at known source lines; Stats.Bugs lists them, so a test
//     can assert that exactly those are predicted.
//   - "random": small random traces (2-4 threads, 1-3 variables) that use
//     every synchronization action of the format, always valid for the
//     parser, for differential tests of the native search against Spin.
//
// Output is streamed: memory does not grow with the number of events, so
// traces of tens of millions of events can be written. The same Config
// always gives the same bytes.
//
// The package does not parse or check traces; tracemodel and predict do.
package gen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Kinds of workload.
const (
	KindFFT    = "fft"
	KindServer = "server"
	KindRandom = "random"
)

// Kinds returns the workload names Write accepts.
func Kinds() []string { return []string{KindFFT, KindServer, KindRandom} }

// Config selects and sizes a workload. Zero values select defaults.
type Config struct {
	Kind string // KindFFT, KindServer or KindRandom
	Seed int64  // the interleaving (and, for random, the program) depends only on it

	// Threads is the number of worker threads for fft and server (a main
	// thread is added; default 4, at least 2 for server) and the number of
	// threads for random (2-4; default drawn from the seed).
	Threads int
	// Vars is, for fft, the number of elements of each of the two buffers
	// (default 16); for random the number of variables (1-3; default drawn
	// from the seed). Unused by server.
	Vars int
	// Phases is the number of barrier phases (fft) or request epochs
	// (server); default 4. Ignored when Events is set.
	Phases int
	// Events, if positive, is the approximate number of events to write:
	// fft and server choose the number of phases from it, random stops
	// drawing actions after this many (plus the closing unlocks and waits).
	// Default for random: 10-40, drawn from the seed.
	Events int64
	// Bugs is the number of seeded atomicity bugs of server (see
	// SeededBug), and for fft the number of shared counters every worker
	// increments without a lock in every phase (a P3 lost update in every
	// pair of workers: hundreds of violating models); random ignores it.
	Bugs int
	// Tape, if not empty, supplies the random decisions before the seeded
	// generator does: byte i decides the i-th choice. Fuzz tests use it so
	// that mutating the input changes the trace locally.
	Tape []byte
}

// Stats describes a written trace.
type Stats struct {
	Events  int64 // event lines written
	Threads int   // distinct threads
	// Bugs are the seeded bugs (server only), in order of their source
	// lines. A bug whose pattern needs two writers or a reader of another
	// kind is listed once per pattern it must produce.
	Bugs []SeededBug
}

// SeededBug is an atomicity bug that the server workload contains by
// construction: every pattern instance that a correct prediction finds on
// Var is an instance of Pattern using only accesses at Lines of File.
type SeededBug struct {
	Pattern string // built-in pattern id, P1..P5
	Kind    string // what the code does wrong, e.g. "split critical section"
	Var     string // the shared variable
	File    string
	Lines   []int // source lines of the accesses that can form an instance
}

// Locs returns the locations of the bug as "file:line".
func (b SeededBug) Locs() []string {
	out := make([]string, len(b.Lines))
	for i, l := range b.Lines {
		out[i] = b.File + ":" + strconv.Itoa(l)
	}
	return out
}

// ConfigError is a Config that cannot be generated.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return "gen: " + e.Msg }

// Write writes the trace of c to w. It returns the statistics of what was
// written, and the first error of w or ctx.
func Write(ctx context.Context, w io.Writer, c Config) (Stats, error) {
	if c.Threads < 0 || c.Vars < 0 || c.Phases < 0 || c.Events < 0 || c.Bugs < 0 {
		return Stats{}, &ConfigError{Msg: "negative size in config"}
	}
	e := newEmitter(ctx, w)
	r := newRNG(c.Seed, c.Tape)
	var (
		st  Stats
		err error
	)
	switch c.Kind {
	case KindFFT:
		st, err = writeFFT(e, r, c)
	case KindServer:
		st, err = writeServer(e, r, c)
	case KindRandom:
		st, err = writeRandom(e, r, c)
	default:
		return Stats{}, &ConfigError{Msg: fmt.Sprintf("unknown kind %q (want fft, server or random)", c.Kind)}
	}
	if err == nil {
		err = e.flush()
	}
	st.Events = e.events
	return st, err
}

// errStop is returned internally once the context is done or w failed; the
// real error is in emitter.err.
var errStop = errors.New("gen: stopped")

// emitter formats event lines into a buffered writer. It checks the
// context and the writer every few thousand events rather than on every
// line, which would dominate the cost of a line.
type emitter struct {
	ctx    context.Context
	w      *bufio.Writer
	line   []byte
	events int64
	err    error
}

func newEmitter(ctx context.Context, w io.Writer) *emitter {
	return &emitter{ctx: ctx, w: bufio.NewWriterSize(w, 1<<16), line: make([]byte, 0, 128)}
}

// checkEvery is how many events pass between context and writer checks.
const checkEvery = 1 << 12

// event writes "<thread>, <n>, <file>-<line>, <action>, <obj>[, <obj2>]".
func (e *emitter) event(thread, file string, line int, action, obj, obj2 string) error {
	e.events++
	b := e.line[:0]
	b = append(b, thread...)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, e.events, 10)
	b = append(b, ", "...)
	b = append(b, file...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(line), 10)
	b = append(b, ", "...)
	b = append(b, action...)
	b = append(b, ", "...)
	b = append(b, obj...)
	if obj2 != "" {
		b = append(b, ", "...)
		b = append(b, obj2...)
	}
	b = append(b, '\n')
	e.line = b
	if _, err := e.w.Write(b); err != nil {
		e.err = err
		return errStop
	}
	if e.events%checkEvery == 0 {
		if err := e.ctx.Err(); err != nil {
			e.err = err
			return errStop
		}
	}
	return nil
}

// comment writes a "# ..." line, which parsers ignore.
func (e *emitter) comment(format string, args ...any) error {
	if _, err := fmt.Fprintf(e.w, "# "+format+"\n", args...); err != nil {
		e.err = err
		return errStop
	}
	return nil
}

func (e *emitter) flush() error {
	if e.err != nil {
		return e.err
	}
	if err := e.w.Flush(); err != nil {
		return err
	}
	return e.ctx.Err()
}

// stopErr turns the internal errStop back into the error that caused it.
func (e *emitter) stopErr(err error) error {
	if errors.Is(err, errStop) && e.err != nil {
		return e.err
	}
	return err
}

// rng is a small deterministic generator (SplitMix64), so that a seed gives
// the same trace on every platform and Go release, optionally fed by a tape
// of decisions first (Config.Tape).
type rng struct {
	state uint64
	tape  []byte
}

func newRNG(seed int64, tape []byte) *rng {
	return &rng{state: uint64(seed) ^ 0x9e3779b97f4a7c15, tape: tape}
}

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); 0 if n <= 1.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if len(r.tape) > 0 {
		b := r.tape[0]
		r.tape = r.tape[1:]
		return int(b) % n
	}
	return int(r.next() % uint64(n))
}

// chance reports true with probability num/den.
func (r *rng) chance(num, den int) bool { return r.intn(den) < num }
