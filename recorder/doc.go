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
// addresses to variable names that are the same in every run: globals by
// their DWARF name and type (counter, log.outcnt, table[3]), shared stack
// objects by their function's DWARF locals (main::ctx.count), heap memory
// through the pointer it was reached by when that path is short and has
// no list link (buf->outcnt), or else by its type and allocation site
// (node.n(malloc@pool.c:120#2), the path kept as a "# reached:" detail) or
// its site and offset (malloc@pool.c:120+16).
//
// What is recorded: reads and writes of global, heap and shared stack
// memory (not the thread's own unshared stack, its TLS or read-only data),
// mutex lock/trylock/unlock, spinlocks, rwlocks, cond wait (with its
// mutex), signal and broadcast, barriers, thread create, start, end and
// join, semaphores, malloc and free (and the program's own allocation
// functions named with --alloc-func), function entry and exit, and C11/GCC
// atomics as release/acquire synchronisation on atomic:<name> (and as data
// accesses where the program also accesses the location plainly; see
// rt/mcprec.c and convert.go).
//
// What is not: memory accesses made by uninstrumented code (libc and other
// libraries not compiled with mcpredict cc), forked children that do not
// exec, statically linked programs, and standalone fences. Only Linux with
// glibc is supported.
package recorder
