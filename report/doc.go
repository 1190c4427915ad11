// Package report renders prediction reports for people and for CI: the
// plain text of the command line, SARIF 2.1.0 for code-scanning services,
// a self-contained HTML page with one swimlane diagram per bug, and the
// terminal helpers of the command line (a progress bar and the choice of
// color). Every renderer shows the bugs by group (bugs.Groups): text and
// HTML the first FirstShown bugs of a group, every failed one, and how
// many more there are, SARIF one result per group.
//
// It only renders: the report itself, its JSON form, the grouping of bugs,
// baselines and suppressions belong to package bugs, and it never runs a
// checker. Nothing it writes depends on the clock or the machine, so its
// output can be compared with golden files.
package report
