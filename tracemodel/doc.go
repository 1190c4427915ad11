// Package tracemodel parses McPatom/Pin-style execution traces and builds the
// partial-order thread model of DESIGN §3: events in observed order, threads,
// vector clocks for the causal order (signal/wait, barriers, create/join,
// semaphores; locks are not causal), shared variables and candidate thread
// pairs, and the projection of the model onto one (variable, thread pair) as a
// PairModel.
//
// It does not know about Promela, LTL or Spin: a PairModel is plain data that
// later stages (promela, native checking, spinrunner) consume.
//
// Memory is proportional to the number of events kept (a fixed-size Event of
// 32 bytes plus its index entries), never to the text of the trace: names
// and source locations are interned. Past Options.SpillAfter events the
// events and their indexes move to a memory-mapped temporary file
// (spill.go), and the heap keeps what grows with the synchronization
// events; a model so parsed must be closed (Model.Close).
//
// Parse uses two goroutines (one reads and splits the lines, the caller's
// applies them, readlines.go), and the scans that keep a state per thread
// use one per core (shares.go); their results do not depend on either.
//
// Options.Visit sees each event as the parse adds it and may stop the read
// there (stream.go): the model is then that of the events read, with the
// indexes a report needs but not the orders and projections.
package tracemodel
