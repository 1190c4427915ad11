package tracemodel

import (
	"fmt"
	"strings"
)

// Kind is the action of a trace event (DESIGN §2).
type Kind uint8

// The actions of the trace format.
const (
	Invalid Kind = iota
	Read
	Write
	Lock
	TryLock // a successful pthread_mutex_trylock
	Unlock
	RdLock
	WrLock
	RwUnlock
	Signal
	Broadcast
	Wait // cond[, mutex]
	BarrierWait
	Create
	Join
	SemPost
	SemWait
	Alloc
	Free
	Enter
	Exit
	Begin
	End
	// Blocked is an acquisition that never completed: the thread was
	// blocked in it when the recording ended (a deadlock or a hang). Its
	// object is the lock, its optional second field the acquisition that
	// blocked (Lock, RdLock or WrLock; default Lock, kept in Obj2 as a
	// Kind). It is the thread's last event and changes no lock state.
	Blocked
	numKinds
)

var kindNames = [numKinds]string{
	Invalid: "Invalid", Read: "Read", Write: "Write", Lock: "Lock", TryLock: "TryLock",
	Unlock: "Unlock", RdLock: "RdLock", WrLock: "WrLock", RwUnlock: "RwUnlock",
	Signal: "Signal", Broadcast: "Broadcast", Wait: "Wait", BarrierWait: "BarrierWait",
	Create: "Create", Join: "Join", SemPost: "SemPost", SemWait: "SemWait",
	Alloc: "Alloc", Free: "Free", Enter: "Enter", Exit: "Exit", Begin: "Begin", End: "End",
	Blocked: "Blocked",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// ParseKind returns the Kind named s, case-insensitively. "Barrier" is an
// alias of BarrierWait.
func ParseKind(s string) (Kind, bool) {
	for k := Read; k < numKinds; k++ {
		if strings.EqualFold(s, kindNames[k]) {
			return k, true
		}
	}
	if strings.EqualFold(s, "Barrier") {
		return BarrierWait, true
	}
	return Invalid, false
}

// DataReadAction is the trace action of a Read whose value decides nothing
// (Event.Data).
const DataReadAction = "DataRead"

// CopyReadAction is the trace action of a DataRead whose value no
// comparison had at all, not even one whose operands differed (Event.Copy):
// the thread copied it or computed with it.
const CopyReadAction = "CopyRead"

// AtomicWriteAction is the trace action of the Write of an atomic
// read-modify-write (Event.RMW).
const AtomicWriteAction = "AtomicWrite"

// actionFlag is what an action's spelling says beyond its Kind.
type actionFlag uint8

const (
	flagNone actionFlag = iota
	flagData            // DataRead: Event.Data
	flagRMW             // AtomicWrite: Event.RMW
	flagCopy            // CopyRead: Event.Data and Event.Copy
)

// parseKindBytes is ParseKind without allocating for the usual spellings;
// flag reports the actions DataRead (a Read with Event.Data) and
// AtomicWrite (a Write with Event.RMW).
func parseKindBytes(b []byte) (k Kind, flag actionFlag, ok bool) {
	switch string(b) { // the compiler does not allocate for this switch
	case "Read":
		return Read, flagNone, true
	case DataReadAction:
		return Read, flagData, true
	case CopyReadAction:
		return Read, flagCopy, true
	case "Write":
		return Write, flagNone, true
	case AtomicWriteAction:
		return Write, flagRMW, true
	case "Lock":
		return Lock, flagNone, true
	case "Unlock":
		return Unlock, flagNone, true
	case "Enter":
		return Enter, flagNone, true
	case "Exit":
		return Exit, flagNone, true
	}
	switch {
	case strings.EqualFold(string(b), DataReadAction):
		return Read, flagData, true
	case strings.EqualFold(string(b), CopyReadAction):
		return Read, flagCopy, true
	case strings.EqualFold(string(b), AtomicWriteAction):
		return Write, flagRMW, true
	}
	k, ok = ParseKind(string(b))
	return k, flagNone, ok
}

// IsAccess reports whether k is a shared-memory access.
func (k Kind) IsAccess() bool { return k == Read || k == Write }

// IsSync reports whether k is a synchronization action whose object becomes
// a synchronization variable (its Read/Write events are dropped).
func (k Kind) IsSync() bool {
	switch k {
	case Lock, TryLock, Unlock, RdLock, WrLock, RwUnlock, Signal, Broadcast, Wait,
		BarrierWait, SemPost, SemWait, Blocked:
		return true
	}
	return false
}

// Blocking reports whether a thread performing k waits for other threads to
// change shared state: these are the region boundaries of DESIGN §3.
func (k Kind) Blocking() bool {
	switch k {
	case Wait, BarrierWait, Join, SemWait:
		return true
	}
	return false
}

// Event is one trace line. It is deliberately small: names and locations are
// interned in the Model.
type Event struct {
	Line   int32 // 1-based line number in the trace file
	Thread int32 // model thread id, 1-based
	// Obj is the object: for Read and Write the variable id (index into
	// Model.Vars), for Create and Join the model id of the other thread,
	// otherwise the object id (index into Model.Objects).
	Obj  int32
	Obj2 int32 // the mutex of a Wait (object id), 0 if none; for Blocked, the Kind of the acquisition
	Loc  int32 // index into Model.Locs; 0 = unknown
	Func int32 // object id of the innermost function entered (Enter/Exit), 0 = unknown
	Pos  int32 // 1-based position of the event in its thread
	Kind Kind
	// Data marks a Read whose value decided nothing in its thread — no
	// comparison, switch or address used it (the action DataRead, written
	// by mcpredict record; see Model.DataflowOrder): it only flows into
	// data, such as the write of a counter update.
	Data bool
	// Copy marks a DataRead whose value no comparison had at all, not
	// even one whose operands differed (the action CopyRead): the thread
	// copied it or computed with it (hi - lo). A DataRead may have failed
	// a test (a limit not reached), a CopyRead tested nothing.
	Copy bool
	// RMW marks a Write made by an atomic read-modify-write (the action
	// AtomicWrite, written by mcpredict record: a successful compare-and-
	// swap, a fetch-and-add): the value it writes comes from the value it
	// read at the same instant, so it loses no other thread's write.
	RMW bool
}

// Loc is a source location.
type Loc struct {
	File string
	Line int // 0 = unknown
}

func (l Loc) String() string {
	if l.File == "" && l.Line == 0 {
		return "?"
	}
	return fmt.Sprintf("%s:%d", l.File, l.Line)
}
