package formats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/mcpredict/mcpredict/formats/formatplugin"
)

// CSV is the name of the built-in format.
const CSV = "csv"

// DefaultTimeout bounds each call to a plugin (start, Detect, every batch).
const DefaultTimeout = 30 * time.Second

// Config configures a Host.
type Config struct {
	// Dirs are searched for mcpredict-format-NAME executables, in order:
	// the first one found of a NAME wins. DefaultDirs is the usual list.
	Dirs []string
	// Timeout bounds each call to a plugin (0: DefaultTimeout). A plugin
	// that does not answer in time is killed.
	Timeout time.Duration
	// Warn, if set, receives warnings (a plugin that failed during
	// detection, a plugin shadowed by another of the same name).
	Warn func(string)
}

// DefaultDirs are the directories searched for plugins: those of
// MCPREDICT_PLUGIN_DIR (a list like PATH), the directory of the running
// executable, then PATH.
func DefaultDirs() []string {
	var dirs []string
	if d := os.Getenv("MCPREDICT_PLUGIN_DIR"); d != "" {
		dirs = append(dirs, filepath.SplitList(d)...)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, filepath.Dir(exe))
	}
	return append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
}

// Format describes a known format.
type Format struct {
	Name        string
	Version     string
	Description string
	Extensions  []string
	Path        string // the plugin executable; "" for the built-in format
	Err         error  // the plugin is broken (Info failed)
}

// Host finds, runs and supervises format plugins. Its methods may be
// called concurrently. Close it to kill every plugin it started.
type Host struct {
	cfg     Config
	plugins []*proc // discovered, sorted by name

	mu     sync.Mutex
	closed bool
}

// proc is one plugin executable and, once started, its process.
type proc struct {
	name, path string
	timeout    time.Duration

	mu     sync.Mutex
	client *plugin.Client
	rpc    *formatplugin.Client
	stderr *tail
	info   *formatplugin.Info
	closed bool
}

// NewHost discovers the plugins in cfg.Dirs. No plugin is started yet.
func NewHost(cfg Config) *Host {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	h := &Host{cfg: cfg}
	seen := map[string]string{CSV: "built in"}
	for _, dir := range cfg.Dirs {
		if dir == "" {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name, ok := strings.CutPrefix(e.Name(), formatplugin.ExecutablePrefix)
			if runtime.GOOS == "windows" {
				name = strings.TrimSuffix(name, ".exe")
			}
			if !ok || name == "" {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
				continue
			}
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			if prev, ok := seen[name]; ok {
				if prev != path {
					h.warn(fmt.Sprintf("format plugin %s: %s is shadowed by %s", name, path, prev))
				}
				continue
			}
			seen[name] = path
			h.plugins = append(h.plugins, &proc{name: name, path: path, timeout: cfg.Timeout})
		}
	}
	sort.Slice(h.plugins, func(i, j int) bool { return h.plugins[i].name < h.plugins[j].name })
	return h
}

func (h *Host) warn(s string) {
	if h.cfg.Warn != nil {
		h.cfg.Warn(s)
	}
}

// Close kills every plugin process the host started. Later calls fail.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range h.plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.close()
		}()
	}
	wg.Wait()
}

// Names are the names of every known format: csv, then the plugins'.
func (h *Host) Names() []string {
	out := []string{CSV}
	for _, p := range h.plugins {
		out = append(out, p.name)
	}
	return out
}

func (h *Host) plugin(name string) *proc {
	for _, p := range h.plugins {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Formats describes every format; each plugin is asked for its Info
// (started if needed). A plugin that fails has Err set.
func (h *Host) Formats(ctx context.Context) []Format {
	out := []Format{{Name: CSV, Version: "built in", Description: "Pin-style CSV (McPatom's Pin tool, mcpredict record)", Extensions: []string{"csv", "trace"}}}
	infos := make([]Format, len(h.plugins))
	var wg sync.WaitGroup
	for i, p := range h.plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := Format{Name: p.name, Path: p.path}
			info, err := p.Info(ctx)
			if err != nil {
				f.Err = err
			} else {
				f.Version, f.Description, f.Extensions = info.Version, info.Description, info.Extensions
			}
			infos[i] = f
		}()
	}
	wg.Wait()
	return append(out, infos...)
}

// Info returns the plugin's Info, asked once.
func (p *proc) Info(ctx context.Context) (formatplugin.Info, error) {
	p.mu.Lock()
	info := p.info
	p.mu.Unlock()
	if info != nil {
		return *info, nil
	}
	var reply formatplugin.Info
	if err := p.call(ctx, "Info", formatplugin.Empty{}, &reply); err != nil {
		return reply, err
	}
	p.mu.Lock()
	p.info = &reply
	p.mu.Unlock()
	return reply, nil
}

// start starts the plugin process if it is not running (again, after a
// failure: a long-lived host, the service, must survive a plugin crash on
// one input).
func (p *proc) start() (*formatplugin.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return nil, p.fail("the plugin host is closed")
	case p.rpc != nil && !p.client.Exited():
		return p.rpc, nil
	case p.client != nil:
		p.client.Kill()
	}
	p.rpc = nil
	cmd := exec.Command(p.path)
	setParentDeathSignal(cmd)
	p.stderr = &tail{max: 4096}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  formatplugin.Handshake(),
		Plugins:          plugin.PluginSet{formatplugin.PluginName: &formatplugin.Plugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		StartTimeout:     p.timeout,
		Stderr:           p.stderr,
		Logger:           hclog.NewNullLogger(),
	})
	cp, err := p.client.Client()
	if err != nil {
		p.client.Kill()
		msg := err.Error()
		if strings.Contains(strings.ToLower(msg), "incompatible api version") {
			msg = fmt.Sprintf("speaks another protocol version (mcpredict speaks %d): %s", formatplugin.ProtocolVersion, msg)
		} else {
			msg = "could not be started: " + msg
		}
		return nil, p.fail(msg)
	}
	raw, err := cp.Dispense(formatplugin.PluginName)
	if err != nil {
		p.client.Kill()
		return nil, p.fail("does not serve the format protocol: " + err.Error())
	}
	c, ok := raw.(*formatplugin.Client)
	if !ok {
		p.client.Kill()
		return nil, p.fail(fmt.Sprintf("dispensed a %T", raw))
	}
	p.rpc = c
	return c, nil
}

func (p *proc) fail(msg string) *PluginError {
	e := &PluginError{Plugin: p.name, Path: p.path, Msg: msg}
	if p.stderr != nil {
		e.Stderr = p.stderr.String()
	}
	return e
}

// call calls method on the plugin with p's timeout. A plugin that does not
// answer in time, or whose connection breaks, is killed and marked broken.
func (p *proc) call(ctx context.Context, method string, args, reply any) error {
	c, err := p.start()
	if err != nil {
		return err
	}
	call := c.Go(method, args, reply)
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case <-call.Done:
		if call.Error == nil {
			return nil
		}
		var se rpc.ServerError
		if errors.As(call.Error, &se) {
			// The plugin answered with an error: it is alive.
			return p.fail(fmt.Sprintf("%s failed: %s", method, se))
		}
		return p.kill(fmt.Sprintf("crashed or closed the connection during %s (%v)", method, call.Error))
	case <-timer.C:
		return p.kill(fmt.Sprintf("did not answer %s within %s (--plugin-timeout); killed it", method, p.timeout))
	case <-ctx.Done():
		// The call's answer is dropped; Close kills the plugins of an
		// interrupted run.
		return ctx.Err()
	}
}

// kill stops the process and returns the error msg, with the plugin's
// last words from stderr. The next call starts the plugin again.
func (p *proc) kill(msg string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		p.client.Kill() // also waits for the stderr copy to finish
	}
	p.rpc = nil
	return p.fail(msg)
}

func (p *proc) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.client != nil {
		p.client.Kill()
	}
}

var _ io.Writer = (*tail)(nil)
