package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Module is one module of the repository.
type Module struct {
	Path string // module path
	Dir  string // absolute directory
}

// Modules returns the modules go.work in root uses, root's own first.
func Modules(root string) ([]Module, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	var mods []Module
	for _, u := range wf.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.Path))
		gomod := filepath.Join(dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: use %s: %w", name, u.Syntax.Start.Line, u.Path, err)
		}
		path := modfile.ModulePath(data)
		if path == "" {
			return nil, fmt.Errorf("%s: no module directive", gomod)
		}
		mods = append(mods, Module{Path: path, Dir: dir})
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Path, b.Path) })
	if len(mods) == 0 || mods[0].Dir != root {
		return nil, fmt.Errorf("%s does not use the root module (.)", name)
	}
	return mods, nil
}

// paths returns the module paths of mods, as a set.
func paths(mods []Module) map[string]bool {
	set := map[string]bool{}
	for _, m := range mods {
		set[m.Path] = true
	}
	return set
}

// SetRequires points every require of one of the repository's modules by another at
// version, and go.work's replacements (which map that version onto the checkout) too.
// A release runs it, commits, and tags every module at that commit.
func SetRequires(root, version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return &usageError{fmt.Sprintf("%q is not a canonical semantic version (vMAJOR.MINOR.PATCH)", version)}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	mods, err := Modules(root)
	if err != nil {
		return err
	}
	ours := paths(mods)
	for _, m := range mods {
		name := filepath.Join(m.Dir, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		out, err := rewriteRequires(name, data, ours, version)
		if err != nil {
			return err
		}
		if err := os.WriteFile(name, out, 0o644); err != nil {
			return err
		}
	}
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return err
	}
	// Each replacement is updated where it stands, so that go.work keeps its layout and
	// comments; a module without one gets one.
	have := map[string]bool{}
	for _, r := range wf.Replace {
		if !ours[r.Old.Path] || r.Old.Version == "" {
			continue
		}
		for i, tok := range r.Syntax.Token {
			if tok == r.Old.Version {
				r.Syntax.Token[i] = version
				break
			}
		}
		r.Old.Version = version
		have[r.Old.Path] = true
	}
	var block *modfile.LineBlock
	for _, stmt := range wf.Syntax.Stmt {
		if b, ok := stmt.(*modfile.LineBlock); ok && len(b.Token) == 1 && b.Token[0] == "replace" {
			block = b
		}
	}
	for _, m := range mods {
		if have[m.Path] {
			continue
		}
		rel, err := filepath.Rel(root, m.Dir)
		if err != nil {
			return err
		}
		dir := "./" + filepath.ToSlash(rel)
		if rel == "." {
			dir = "."
		}
		// Into the block of replacements, which AddReplace would not use.
		if block == nil {
			block = &modfile.LineBlock{Token: []string{"replace"}}
			wf.Syntax.Stmt = append(wf.Syntax.Stmt, block)
		}
		block.Line = append(block.Line, &modfile.Line{Token: []string{m.Path, version, "=>", dir}, InBlock: true})
	}
	wf.SortBlocks()
	return os.WriteFile(name, modfile.Format(wf.Syntax), 0o644)
}

// rewriteRequires returns the go.mod data with every require of a module in ours set
// to version.
func rewriteRequires(name string, data []byte, ours map[string]bool, version string) ([]byte, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range f.Require {
		if ours[r.Mod.Path] {
			if err := f.AddRequire(r.Mod.Path, version); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}
