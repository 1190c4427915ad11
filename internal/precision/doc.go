// Package precision measures mcpredict's precision and recall on real C
// programs: each example program says in its source what must be
// reported, and Check compiles it with `mcpredict cc`, records it with
// `mcpredict record`, predicts with `mcpredict run --format json` and
// compares the report with what the source says.
//
// # Annotations
//
// A program's expectations are lines of its top comment that start with
// "mcpredict:" (after the comment's "*" or "//"):
//
//	mcpredict:args 2 20000
//
// the program's arguments for the recording (optional; none by default).
//
//	mcpredict:stdin input.txt
//
// (optional) the program's standard input: a file beside the program,
// read when it is recorded and given to `mcpredict reproduce --stdin`, so
// that the directed runs read what the recorded run read (an empty
// standard input by default).
//
//	mcpredict:expect none
//
// a correctly synchronised program (an idiom): nothing may be reported.
//
//	mcpredict:expect P3 balance local:Read@read remote:Write@write local:Write@write
//
// a bug that must be predicted: the pattern (or alternatives, "P3|P5"),
// the variable as the report names it (one of the bug's vars), and any
// number of accesses role:Action@marker that must all be among the bug's
// locations. role is local or remote, Action is Read or Write, and @marker
// names a "@marker" comment in the source (for example /* @read: ... */)
// whose line the location must have; without "@marker" any line of the
// file matches. Several expect lines are several bugs that must all be
// found; one reported bug may match several of them.
//
//	mcpredict:allow P1 buf->outcnt local:Read@reread local:Read@update
//
// (optional, same form as an expected bug) a true bug that may be
// reported but need not be: a report matching it is not unexpected, and
// it is not counted as expected. For a program with several true bugs
// whose reports depend on the witness the engine picks.
//
//	mcpredict:notexhibited balance
//
// (optional) the recorded run must not interleave the threads' accesses
// to the variable, so that the bug is predicted, not observed: the program
// is recorded again, up to five times, until a run does not.
//
//	mcpredict:reports conflict cycle
//	mcpredict:reports svd none
//
// (optional, repeatable) what an opt-in analysis reports on the program:
// with --analysis conflict, at least one bug of the analysis conflict of
// kind cycle; with --analysis svd, no bug of svd (a correct twin). These
// are checked on the same recordings, apart from the default analyses'
// expectations.
//
// A reported bug that matches no expect or allow line is an unexpected report:
// noise for a bug program, a false positive for an idiom.
//
// # Use
//
// The command internal/precision/cmd/precision prints the results of a
// directory of programs as a Markdown table (`make precision`), and the
// package's test asserts them for examples/c.
package precision
