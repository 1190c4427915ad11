// Package formatplugin is the protocol between mcpredict and its
// trace-format plugins, and the helper a plugin author calls: implement
// Format, call Serve from main.
//
// A plugin is an executable named mcpredict-format-NAME. mcpredict starts
// it with hashicorp/go-plugin (net/rpc over a local socket, handshake
// ProtocolVersion) and calls, on the plugin's "format" service:
//
//	Info()                          name, version, description, extensions
//	Detect(head)                    does this content look like my format?
//	Open(path, limits) -> session   start reading the trace file
//	Next(session) -> Batch          the next batch of event records, until Done
//	Close(session)                  stop reading
//
// Records are the fields of a CSV trace line (thread, action, object,
// second object, file, line) plus the record's own line in the plugin's
// file. Strings are sent once per session in a string table; a record is
// seven integers. mcpredict checks and applies every record exactly as it
// does a CSV line (package tracemodel), so plugins only translate syntax.
//
// The package does not discover, start or supervise plugins: package
// formats does that on the host side.
package formatplugin

import (
	"strings"

	"github.com/hashicorp/go-plugin"
)

// ProtocolVersion is the version of this protocol. A plugin built against
// another version is refused at the handshake.
const ProtocolVersion = 1

// PluginName is the name of the go-plugin service a plugin serves.
const PluginName = "format"

// ExecutablePrefix starts the name of every plugin executable.
const ExecutablePrefix = "mcpredict-format-"

// BatchSize is the number of records Serve sends per batch.
const BatchSize = 8192

// RecordInts is the number of int32 values per record in Batch.Recs.
const RecordInts = 7

// Handshake is the go-plugin handshake of ProtocolVersion. The magic cookie
// only keeps a plugin from being run by hand by mistake; it is no security
// measure.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   "MCPREDICT_FORMAT_PLUGIN",
		MagicCookieValue: "8c1d7f0e-trace-format",
	}
}

// Info describes a format.
type Info struct {
	Name        string   // the NAME of mcpredict-format-NAME
	Version     string   // the plugin's own version
	Description string   // one line
	Extensions  []string // file extensions without the dot, e.g. "std"; used when content does not decide
}

// DetectArgs are the arguments of Detect: the first bytes of the trace
// (at most DetectBytes, decompressed).
type DetectArgs struct {
	Head []byte
}

// DetectBytes bounds DetectArgs.Head.
const DetectBytes = 64 << 10

// DetectReply is Detect's answer.
type DetectReply struct {
	Match bool
}

// OpenArgs start reading a trace file.
type OpenArgs struct {
	Path         string // absolute path; may be gzip or zstd compressed
	MaxLineBytes int    // longest line accepted (0: no bound)
	MaxBytes     int64  // largest decompressed trace accepted (0: no bound)
}

// OpenReply names the reading session.
type OpenReply struct {
	Session int
}

// SessionArgs name a session (Next, Close).
type SessionArgs struct {
	Session int
}

// Batch is a batch of records. Strings extend the session's string table
// (id 0 is ""; each batch's strings take the next ids). Recs holds
// RecordInts values per record:
//
//	thread, action, object, object2, file  string ids (action: an Actions index)
//	line                                   source line (0 with file 0: unknown location)
//	traceLine                              the record's line in the trace file, >= 1, never decreasing
//
// A record with action 0 (ActionProblem) is a malformed line of the trace:
// its object is the id of the message. Done ends the session: Err, if not
// nil, is why reading stopped (bad input).
type Batch struct {
	Strings []string
	Recs    []int32
	Done    bool
	Err     *ReadError
}

// ReadError is the error that ended a Read: bad input at Line (0: no line).
type ReadError struct {
	Line int
	Msg  string
}

// Empty is the reply of calls that return nothing.
type Empty struct{}

// ActionProblem is the action code of a malformed line.
const ActionProblem = 0

// Actions are the action names by code (the CSV trace format's actions).
func Actions() []string {
	return []string{"", "Read", "Write", "Lock", "TryLock", "Unlock", "RdLock", "WrLock", "RwUnlock",
		"Signal", "Broadcast", "Wait", "BarrierWait", "Create", "Join", "SemPost", "SemWait",
		"Alloc", "Free", "Enter", "Exit", "Begin", "End"}
}

// ActionCode returns the code of an action name (case-insensitive; Barrier
// is BarrierWait), or 0 if there is none.
func ActionCode(name string) int32 {
	if strings.EqualFold(name, "Barrier") {
		name = "BarrierWait"
	}
	for i, a := range Actions() {
		if i > 0 && strings.EqualFold(a, name) {
			return int32(i)
		}
	}
	return 0
}
