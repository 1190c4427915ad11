package formats

import (
	"fmt"
	"strings"
	"sync"
)

// PluginError is a broken plugin: it could not be started, spoke another
// protocol version, crashed, did not answer in time, or sent malformed
// records. Stderr is the end of the plugin's standard error, if any.
type PluginError struct {
	Plugin string // format name
	Path   string // executable
	Msg    string
	Stderr string
}

func (e *PluginError) Error() string {
	s := fmt.Sprintf("format plugin %s (%s): %s", e.Plugin, e.Path, e.Msg)
	if t := strings.TrimSpace(e.Stderr); t != "" {
		s += "; its standard error ends with:\n" + t
	}
	return s
}

// InputError is an input whose format is unknown or ambiguous, or a
// format name nobody provides: bad input or usage.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return e.Msg }

// tail keeps the last bytes written to it (a plugin's stderr).
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// BrokenPlugin marks the error as a plugin's failure (for packages that do
// not import this one).
func (e *PluginError) BrokenPlugin() bool { return true }
