// Package gomod finds the Go module a directory belongs to, as the go command does:
// the nearest go.mod at or above it.
package gomod

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Find returns the directory of the go.mod at or above dir and its module path; both
// are "" when there is none.
func Find(dir string) (root, path string, err error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("jobc: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					rest, _, _ = strings.Cut(rest, "//")
					return d, strings.Trim(strings.TrimSpace(rest), `"`), nil
				}
			}
			return "", "", fmt.Errorf("jobc: %s has no module line", filepath.Join(d, "go.mod"))
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("jobc: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", nil
		}
		d = parent
	}
}

// ImportPath returns the import path of the package in dir, and the module root; "" for
// both when dir is in no module. dir need not exist yet.
func ImportPath(dir string) (path, root string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("jobc: %w", err)
	}
	root, mod, err := Find(abs)
	if err != nil || root == "" {
		return "", "", err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", fmt.Errorf("jobc: %s is not inside module %s (%s)", abs, mod, root)
	}
	if rel == "." {
		return mod, root, nil
	}
	return mod + "/" + filepath.ToSlash(rel), root, nil
}
