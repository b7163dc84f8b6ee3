package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// Publish writes every module at version into dir in the layout of a module proxy
// (GOPROXY=file://DIR): for each, @v/list, VERSION.info, VERSION.mod and VERSION.zip,
// the zip made as the go command makes one from a tag. As a release commit would, every
// go.mod requires the others at version. The files are those git tracks or would track
// (untracked but not ignored), so a proxy built from a working tree with changes
// serves the changes.
func Publish(root, version, dir string) error {
	if err := module.Check("github.com/jobc-dev/jobc", version); err != nil {
		return &usageError{err.Error()}
	}
	mods, err := Modules(root)
	if err != nil {
		return err
	}
	ours := paths(mods)
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for _, m := range mods {
		gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		gomod, err = rewriteRequires(filepath.Join(m.Dir, "go.mod"), gomod, ours, version)
		if err != nil {
			return err
		}
		files, err := moduleFiles(m, mods, gomod)
		if err != nil {
			return err
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		at := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		var z bytes.Buffer
		if err := zip.Create(&z, module.Version{Path: m.Path, Version: version}, files); err != nil {
			return fmt.Errorf("zip %s: %w", m.Path, err)
		}
		for name, data := range map[string][]byte{
			version + ".info": info, version + ".mod": gomod, version + ".zip": z.Bytes(), "list": []byte(version + "\n"),
		} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleFiles lists the files of m (those of modules nested in it excluded), with gomod
// as its go.mod.
func moduleFiles(m Module, mods []Module, gomod []byte) ([]zip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = m.Dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", m.Dir, err)
	}
	var files []zip.File
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		abs := filepath.Join(m.Dir, filepath.FromSlash(rel))
		if nested(abs, m, mods) {
			continue
		}
		if rel == "go.mod" {
			files = append(files, memFile{path: rel, data: gomod})
			continue
		}
		if _, err := os.Lstat(abs); os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		files = append(files, diskFile{path: rel, abs: abs})
	}
	return files, nil
}

// nested reports whether the file at abs belongs to another module of mods inside m.
func nested(abs string, m Module, mods []Module) bool {
	for _, o := range mods {
		if o.Dir != m.Dir && strings.HasPrefix(o.Dir, m.Dir+string(filepath.Separator)) &&
			strings.HasPrefix(abs, o.Dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

type diskFile struct{ path, abs string }

func (f diskFile) Path() string                 { return f.path }
func (f diskFile) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

// memFile is a file whose content is given: the rewritten go.mod.
type memFile struct {
	path string
	data []byte
}

func (f memFile) Path() string                 { return f.path }
func (f memFile) Lstat() (fs.FileInfo, error)  { return memInfo(f), nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo memFile

func (i memInfo) Name() string       { return filepath.Base(i.path) }
func (i memInfo) Size() int64        { return int64(len(i.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
