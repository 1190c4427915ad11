// Package formats reads traces in any format mcpredict knows: the built-in
// CSV format (package tracemodel) and the formats of trace-format plugins,
// executables named mcpredict-format-NAME spoken to with
// hashicorp/go-plugin (protocol: package formatplugin).
//
// A Host discovers plugins in a list of directories, detects the format of
// an input by content (then by file extension), starts the plugins it
// needs, supervises them (a timeout on every call, crashes and protocol
// violations reported as *PluginError naming the plugin) and kills them
// all on Close. A plugin only translates syntax: its event records go
// through tracemodel.ParseRecords, the same builder and checks as CSV.
//
// The package also writes a model back as CSV, STD (RAPID) or JSONL
// (Write), for mcpredict convert.
//
// It does not analyse traces, and it does not decide exit statuses: callers
// classify *PluginError (a broken plugin), *InputError and
// *tracemodel.ParseError (bad input).
package formats
