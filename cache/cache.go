// Package cache stores the verdicts of PairModels on disk, keyed by a
// canonical hash of the model's structure and the pattern set, so that an
// unchanged model — from the same trace or another one, in this run or a
// later one — is never checked twice (the redundancy the McPatom paper names
// as a limitation).
//
// The key covers only what determines the verdicts and the witness: step
// kinds, which variable of a set model each access is (Step.Second), lock
// indexes and kinds, guards, progress marks and read sources, the
// variables whose writes commute (PairModel.OnlyUpdates), whether the model
// starts past a boundary (PairModel.Broken), the patterns and the engine;
// not variable names, thread handles or source lines. A witness
// is stored as model steps and mapped back to the new model's events by the
// caller.
//
// Entries are written to a temporary file and renamed into place, so
// concurrent processes sharing a directory never see a partial entry. A
// corrupt or unreadable entry is a miss, never an error.
package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpredict/mcpredict/internal/atomicfile"
	"github.com/mcpredict/mcpredict/ltl"
	"github.com/mcpredict/mcpredict/tracemodel"
)

// formatVersion changes whenever the meaning of a key or an entry changes;
// it is part of the directory name so that old entries are ignored.
// v3: keys cover Step.Second, PairModel.OnlyUpdates and PairModel.Broken
// (two set models that differed only in the order of their variables'
// accesses shared a v2 key, and one got the other's instances).
// v4: keys cover Step.Atomic and ltl.Pattern.PlainLast (the precise lost
// update is searched, not a filter of the instances found).
const formatVersion = "v4"

// Verdict is the cached decision of one claim.
type Verdict struct {
	Claim    string               `json:"claim"`
	Violated bool                 `json:"violated,omitempty"`
	Witness  []tracemodel.StepRef `json:"witness,omitempty"`
	// Instances are the claim's distinct instances from the native
	// enumeration (native.Checker.Instances); empty when only Spin could
	// decide the model, and Witness is then the one instance.
	Instances [][]tracemodel.StepRef `json:"instances,omitempty"`
}

// Entry is the cached result of one model.
type Entry struct {
	Engine   string    `json:"engine"` // engine that produced the witnesses: spin or native
	Spin     bool      `json:"spin"`   // Spin was run
	Verdicts []Verdict `json:"verdicts"`
}

// Dir is a cache directory. The zero value is not usable; use Open.
type Dir struct {
	path string
}

// DefaultPath is the cache directory used when none is given: under the
// user's cache directory.
func DefaultPath() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no default cache directory (%v): use --cache-dir or --no-cache", err)
	}
	return filepath.Join(base, "mcpredict", "verdicts"), nil
}

// Open returns the cache in directory path, creating it.
func Open(path string) (*Dir, error) {
	p := filepath.Join(path, formatVersion)
	if err := os.MkdirAll(p, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &Dir{path: p}, nil
}

// Key returns the canonical key of a model checked with the given patterns
// and engine.
func Key(pm *tracemodel.PairModel, pats []ltl.Pattern, engine string) string {
	h := sha256.New()
	var buf [8]byte
	put := func(v int) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	h.Write([]byte(formatVersion + "\x00" + engine + "\x00"))
	for _, p := range pats {
		h.Write([]byte(p.ID + "\x00" + ltl.FormatTerms(p.Terms) + "\x00"))
		if p.PublishBreaks() {
			h.Write([]byte{1})
		}
		if p.PlainLast {
			h.Write([]byte{2})
		}
	}
	flag := func(b bool) {
		if b {
			put(1)
		} else {
			put(0)
		}
	}
	flag(pm.Var2 != "")
	flag(pm.OnlyUpdates[0])
	flag(pm.OnlyUpdates[1])
	flag(pm.Broken)
	put(len(pm.Locks))
	for _, l := range pm.Locks {
		flag(l.RW)
	}
	for x := 0; x < 2; x++ {
		put(len(pm.Steps[x]))
		for _, s := range pm.Steps[x] {
			put(int(s.Kind))
			put(s.Lock)
			put(s.Guard)
			put(s.Progress)
			put(s.Source)
			flag(s.Second)
			flag(s.Atomic)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (d *Dir) file(key string) string {
	return filepath.Join(d.path, key[:2], key[2:]+".json")
}

// Get returns the entry for key, if present and readable.
func (d *Dir) Get(key string) (Entry, bool) {
	b, err := os.ReadFile(d.file(key))
	if err != nil {
		return Entry{}, false
	}
	var e Entry
	if json.Unmarshal(b, &e) != nil || e.Engine == "" {
		return Entry{}, false
	}
	return e, true
}

// Put stores the entry for key atomically.
func (d *Dir) Put(key string, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	path := d.file(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// Len counts the entries (for tests and statistics).
func (d *Dir) Len() int {
	n := 0
	filepath.WalkDir(d.path, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && filepath.Ext(p) == ".json" {
			n++
		}
		return nil
	})
	return n
}
