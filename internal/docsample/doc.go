// Package docsample keeps the command-output samples of the Markdown
// documentation (README.md, docs/*.md, recorder/README.md, any *.md of the
// repository) true: its test runs every sample's command with a freshly
// built mcpredict and compares what it prints with what the document shows.
//
// # Convention
//
// A sample is a fenced code block of one of two forms.
//
// A session: the block's first line starts with "$ ". Every line that
// starts with "$ " is a command, the lines up to the next one its output
// (standard output and standard error, as a terminal shows them):
//
//	```
//	$ mcpredict run --engine native examples/bank.csv
//	bank.c
//	  AV-61ebbb33d840  P3 lost update on balance (2 instances)
//	...
//	$ echo $?
//	1
//	```
//
// An output: the line right above the opening fence is the HTML comment
// <!-- sample: COMMAND -->, and the whole block is COMMAND's output. This is
// for a block that shows only what a command prints, the command being
// elsewhere (README's first run shows `make run` above it, and the sample's
// command is what make runs: ./bin/mcpredict run examples/bank.csv).
//
// The comment <!-- sample abridged --> above a session (or <!-- sample
// abridged: COMMAND --> above an output) marks it as abridged: "..." (bare
// or quoted) stands for any text, and the rest is compared token by token
// (JSON strings, numbers, punctuation, words), so that the sample may be
// wrapped differently from the real output. An abridged sample is checked
// but never rewritten.
//
// The commands of a block run, in order, in one "sh" from the repository
// root (a scratch copy of it made of symbolic links, so that files written
// with -o stay out of the repository; write them in the current directory),
// with the mcpredict under test and its trace-format plugins first in PATH
// and as ./bin/mcpredict, no terminal, NO_COLOR=1 and a new, empty verdict
// cache for every block, so that a run does not depend on the runs before it.
//
// # Comparison
//
// Both texts are normalized before they are compared, and only for what
// varies from run to run: durations (1.282s, 35ms, 2m3s and JSON
// "elapsed_ns") become <time>, versions (0.1.0-dev) <version>, paths under
// the temporary directory <tmp>; trailing blanks of a line and trailing
// empty lines are dropped. Everything else — bug ids, counts, line numbers,
// spacing inside a line — must match.
//
// A fenced block that looks like mcpredict's output (a bug id, a report's
// summary or statistics, a message "mcpredict run: ...", a JSON report, a
// "$ " line) must be a sample, or be listed in the test's table of excluded
// blocks with the reason. Indented (unfenced) code blocks are not looked at.
//
// # Updating
//
//	go test ./internal/docsample -update
//
// rewrites, in place, the output of every sample that differs (only those
// lines: the rest of each file stays byte for byte) with what the command
// prints now; review the diff and commit it. It does not rewrite abridged
// samples, and it does not decide whether a change of the output is right.
package docsample
