// Package reproduce re-runs a recorded program under schedules that force
// the interleavings of predicted atomicity violations, and says which of
// them really happened and which changed the program's outcome.
//
// For each candidate bug (bugs.Bug with its witness instances) it builds a
// Schedule: the source sites of the pattern's accesses (the local thread's
// first and second access, the remote accesses in order), mapped to code
// ranges through the DWARF of the recorded objects, and the occurrence of
// the first site to act on. The recorded command runs again with the
// recorder's runtime enforcing the schedule (MCPREDICT_SCHEDULE: the local
// thread is held after its first access until the remote accesses were
// made on the same address, bounded by a pause), every directed run is
// recorded, and Observe decides from that run's own trace whether the
// pattern happened in the predicted order (reproduced). A reproduced run
// that ended differently from the recorded one, or whose --check command
// failed, is a failed run: the bug changed what the program did.
//
// It does not predict: candidates come from the caller (the reports of
// the default and of relaxed models). It does not render: Apply writes
// the outcomes into the report's bugs (bugs.Reproduction).
package reproduce
