package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jobc-dev/jobc/generator/internal/confine"
	"github.com/jobc-dev/jobc/generator/spec"
)

// LockName is the lock file's name; it lives next to jobc.yaml.
const LockName = "jobc.lock"

// lockFormat is the version of the lock file's layout.
const lockFormat = 1

// LockFile records the released payload contracts: per job kind (and per event) its
// aliases, its write_version, and every released version's canonical schema with its
// SHA-256. It is
// JSON, written deterministically (keys sorted, versions ascending, two-space indent),
// so that a change to it reads well in a code review.
type LockFile struct {
	Format int                   `json:"jobc_lock"`
	Jobs   map[string]*LockedJob `json:"jobs"`
	// Events holds the events' contracts, in the same form; absent when there are none,
	// so that a project without events keeps its lock file as it was.
	Events map[string]*LockedJob `json:"events,omitempty"`
	// Results holds the jobs' result contracts (result: in the spec), by kind, in the
	// same form; absent when no job has one.
	Results map[string]*LockedJob `json:"results,omitempty"`
	// Workflows holds the workflows' input contracts, by name, in the same form;
	// absent when there are none.
	Workflows map[string]*LockedJob `json:"workflows,omitempty"`
	// Signals holds the workflows' signal contracts, by <workflow>.<signal>, in the
	// same form; absent when there are none.
	Signals map[string]*LockedJob `json:"signals,omitempty"`
	// Source names the baseline in messages: LockName, or the git revision it was
	// built from.
	Source string `json:"-"`
}

// LockedJob is the released contract of one kind or event.
type LockedJob struct {
	Aliases      []string        `json:"aliases,omitempty"`
	WriteVersion int             `json:"write_version"`
	Versions     []LockedVersion `json:"versions"` // ascending

	pos spec.Pos // where the kind is recorded
}

// LockedVersion is one released payload version.
type LockedVersion struct {
	Version int    `json:"version"`
	SHA256  string `json:"sha256"` // hex SHA-256 of the canonical schema
	// Schema is the canonical schema (spec.Schema.Canonical), kept so that a change
	// can be shown as a diff without the history.
	Schema json.RawMessage `json:"schema"`

	pos spec.Pos
}

// Highest returns the highest released version, or 0 when there is none.
func (j *LockedJob) Highest() int {
	h := 0
	for _, v := range j.Versions {
		h = max(h, v.Version)
	}
	return h
}

// NewLock returns a lock file that records no released contracts: what `jobc init`
// writes before the first release.
func NewLock() *LockFile {
	return &LockFile{Format: lockFormat, Jobs: map[string]*LockedJob{}, Source: LockName}
}

// Lock records every version of every job and event of p as released.
func Lock(p *spec.Project) (*LockFile, error) {
	l := &LockFile{Format: lockFormat, Jobs: map[string]*LockedJob{}, Source: LockName}
	for _, k := range p.Contracts() {
		lj := &LockedJob{Aliases: append([]string(nil), k.Aliases...), WriteVersion: k.Payload.WriteVersion, pos: k.Pos}
		for _, v := range k.Payload.Versions {
			canon, err := v.Schema.Canonical()
			if err != nil {
				return nil, fmt.Errorf("jobc: lock %s version %d: %w", k.Name, v.Number, err)
			}
			lj.Versions = append(lj.Versions, LockedVersion{Version: v.Number, SHA256: hash(canon), Schema: canon, pos: v.Pos})
		}
		l.section(k.LockSection())[k.Name] = lj
	}
	return l, nil
}

// section returns the contracts of a lock section, "jobs", "events", "results" or
// "workflows" (spec.Contract.LockSection), creating the map on first use.
func (l *LockFile) section(name string) map[string]*LockedJob {
	switch name {
	case "events":
		if l.Events == nil {
			l.Events = map[string]*LockedJob{}
		}
		return l.Events
	case "results":
		if l.Results == nil {
			l.Results = map[string]*LockedJob{}
		}
		return l.Results
	case "workflows":
		if l.Workflows == nil {
			l.Workflows = map[string]*LockedJob{}
		}
		return l.Workflows
	case "signals":
		if l.Signals == nil {
			l.Signals = map[string]*LockedJob{}
		}
		return l.Signals
	}
	return l.Jobs
}

func hash(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// Marshal encodes the lock file.
func (l *LockFile) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	out := *l
	if out.Jobs == nil {
		out.Jobs = map[string]*LockedJob{}
	}
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("jobc: encode %s: %w", LockName, err)
	}
	return b.Bytes(), nil
}

// WriteLock writes the lock file into dir, the project directory, atomically.
func WriteLock(dir string, l *LockFile) error {
	b, err := l.Marshal()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, LockName)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	tmp, err := os.CreateTemp(dir, "."+LockName+".*")
	if err != nil {
		return fmt.Errorf("jobc: write %s: %w", LockName, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("jobc: write %s: %w", LockName, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("jobc: write %s: %w", LockName, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("jobc: write %s: %w", LockName, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("jobc: write %s: %w", LockName, err)
	}
	return nil
}

// LoadLock reads the lock file of the project in dir. A missing file is an error that
// wraps fs.ErrNotExist; problems with its content are spec.Diagnostics.
// Like every file of the spec, the lock file is read only inside the project: a lock
// file that is a link to a file outside is an error, and its content is never quoted.
func LoadLock(dir string) (*LockFile, error) {
	real, err := confine.Resolve(dir, LockName)
	if err != nil {
		return nil, fmt.Errorf("jobc: read %s: %w", LockName, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("jobc: read %s: %w", LockName, err)
	}
	defer root.Close()
	b, err := root.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("jobc: read %s: %w", LockName, err)
	}
	return ParseLock(LockName, b)
}

// ParseLock decodes a lock file; name is used in diagnostics. It checks that every
// recorded schema matches its hash, so a hand edit cannot weaken the check silently.
func ParseLock(name string, b []byte) (*LockFile, error) {
	var l LockFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, spec.Diagnostics{{Pos: offsetPos(name, b, err), Message: "invalid lock file: " + strings.TrimPrefix(err.Error(), "json: ") + ": restore it from version control or run `jobc lock`"}}
	}
	l.Source = name
	if l.Jobs == nil {
		l.Jobs = map[string]*LockedJob{}
	}
	locateLock(name, b, &l)
	var ds spec.Diagnostics
	bad := func(pos spec.Pos, path, format string, args ...any) {
		ds = append(ds, spec.Diagnostic{Pos: pos, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if l.Format != lockFormat {
		bad(spec.Pos{File: name, Line: 1, Col: 1}, "jobc_lock", "unsupported lock format %d: this jobc reads format %d", l.Format, lockFormat)
		return nil, ds
	}
	for _, sec := range []string{"jobs", "events", "results", "workflows", "signals"} {
		contracts := map[string]map[string]*LockedJob{"jobs": l.Jobs, "events": l.Events, "results": l.Results, "workflows": l.Workflows, "signals": l.Signals}[sec]
		for _, kind := range sortedKeys(contracts) {
			checkLocked(bad, name, sec+"."+kind, contracts[kind])
		}
	}
	if len(ds) > 0 {
		return nil, ds
	}
	return &l, nil
}

// checkLocked checks one recorded contract, at path in the lock file.
func checkLocked(bad func(pos spec.Pos, path, format string, args ...any), name, at string, lj *LockedJob) {
	if lj == nil {
		bad(spec.Pos{File: name, Line: 1, Col: 1}, at, "want an object, got null")
		return
	}
	for i, v := range lj.Versions {
		path := at + ".versions." + strconv.Itoa(i)
		if i > 0 && v.Version <= lj.Versions[i-1].Version {
			bad(v.pos, path, "versions must be ascending: %d follows %d", v.Version, lj.Versions[i-1].Version)
		}
		canon, err := canonicalRaw(v.Schema)
		if err != nil {
			bad(v.pos, path+".schema", "invalid schema: %v", err)
			continue
		}
		if hash(canon) != v.SHA256 {
			bad(v.pos, path+".sha256", "the hash does not match the schema recorded with it: the lock file was edited by hand; restore it from version control")
		}
	}
}

// canonicalRaw re-encodes a JSON document canonically, keeping numbers as written.
func canonicalRaw(raw json.RawMessage) ([]byte, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return spec.CanonicalJSON(v)
}

func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return v, nil
}

// offsetPos turns the offset of a JSON decoding error into a position.
func offsetPos(name string, b []byte, err error) spec.Pos {
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // the offset is past the offending byte
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off >= int64(len(b)) {
		return spec.Pos{File: name, Line: 1, Col: 1}
	}
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return spec.Pos{File: name, Line: line, Col: col}
}

// locateLock records where each kind and version is written. JSON is YAML, so the
// YAML parser gives positions; when it cannot, everything is at the file's start.
func locateLock(name string, b []byte, l *LockFile) {
	start := spec.Pos{File: name, Line: 1, Col: 1}
	for _, contracts := range []map[string]*LockedJob{l.Jobs, l.Events, l.Results, l.Workflows, l.Signals} {
		for _, lj := range contracts {
			if lj == nil {
				continue
			}
			lj.pos = start
			for i := range lj.Versions {
				lj.Versions[i].pos = start
			}
		}
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	locateSection(name, member(doc.Content[0], "jobs"), l.Jobs)
	locateSection(name, member(doc.Content[0], "events"), l.Events)
	locateSection(name, member(doc.Content[0], "results"), l.Results)
	locateSection(name, member(doc.Content[0], "workflows"), l.Workflows)
	locateSection(name, member(doc.Content[0], "signals"), l.Signals)
}

// locateSection records the positions of one section's contracts.
func locateSection(name string, jobs *yaml.Node, contracts map[string]*LockedJob) {
	if jobs == nil || jobs.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		k, v := jobs.Content[i], jobs.Content[i+1]
		lj := contracts[k.Value]
		if lj == nil {
			continue
		}
		lj.pos = spec.Pos{File: name, Line: k.Line, Col: k.Column}
		vs := member(v, "versions")
		if vs == nil || vs.Kind != yaml.SequenceNode {
			continue
		}
		for j, e := range vs.Content {
			if j < len(lj.Versions) {
				lj.Versions[j].pos = spec.Pos{File: name, Line: e.Line, Col: e.Column}
			}
		}
	}
}

func member(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
