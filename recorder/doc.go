// Package recorder records traces of real C and C++ programs for mcpredict,
// without Pin.
//
// A program is compiled with gcc's ThreadSanitizer instrumentation
// (-fsanitize=thread), which inserts a call before every memory access and
// at every function entry and exit, but it is linked against a small
// runtime of our own (rt/mcprec.c, built from source with gcc by
// BuildRuntime) instead of the sanitizer. [CompileCommands] computes the
// compiler and linker invocations; `mcpredict cc` runs them.
//
// When the program runs with MCPREDICT_TRACE_DIR set, the runtime writes a
// raw binary log: one memory-mapped file per thread holding events stamped
// with a global sequence number, and a text file with the load addresses of
// the program's modules. Because the logs are written through shared
// mappings, a program that crashes or is killed keeps everything recorded
// up to that moment. [Record] runs a program this way; [Convert] then
// merges the per-thread logs by sequence number and writes the trace in
// the CSV format of DESIGN §2, resolving program counters to file-line with
// debug/dwarf line tables (relative to each module's load address) and data
// addresses to variable names: globals by their DWARF name and type
// (counter, log.outcnt, table[3]), heap memory through the pointer it was
// reached by (buf->outcnt), otherwise as heap:0xADDR+OFF relative to its
// malloc block.
//
// What is recorded: reads and writes of global and heap memory (not the
// thread's own stack), mutex lock/trylock/unlock, spinlocks, rwlocks, cond
// wait (with its mutex), signal and broadcast, barriers, thread create and
// join, semaphores, malloc and free, function entry and exit, and C11/GCC
// atomics as release/acquire synchronisation (Signal/Wait on the atomic's
// address; see rt/mcprec.c).
//
// What is not: memory accesses made by uninstrumented code (libc and other
// libraries not compiled with mcpredict cc), forked children that do not
// exec, statically linked programs, and standalone fences. Only Linux with
// glibc is supported.
package recorder
