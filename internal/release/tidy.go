package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// Tidy runs go mod tidy in every module with the other modules taken from the
// checkout, and with diff reports what it would change instead of writing it (and
// fails when anything would change).
//
// go mod tidy ignores go.work, and the versions the modules require of one another are
// either unpublished (before the first release) or older than the checkout. So tidy
// runs on a copy of go.mod (-modfile) that adds a directory replacement for every other
// module; the replacements are dropped again before the comparison. A directory
// replacement has no checksum, so go.sum keeps only the third-party modules' lines.
func Tidy(ctx context.Context, root string, diff bool, w io.Writer) error {
	mods, err := Modules(root)
	if err != nil {
		return err
	}
	ours := paths(mods)
	var untidy []string
	for _, m := range mods {
		fmt.Fprintf(w, "go mod tidy (%s)\n", m.Path)
		mod, sum, err := tidyOne(ctx, m, mods, ours)
		if err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			data []byte
		}{{"go.mod", mod}, {"go.sum", sum}} {
			name := filepath.Join(m.Dir, f.name)
			old, err := os.ReadFile(name)
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			if bytes.Equal(old, f.data) {
				continue
			}
			if !diff {
				if len(f.data) == 0 {
					err = os.Remove(name)
				} else {
					err = os.WriteFile(name, f.data, 0o644)
				}
				if err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(w, "%s is not tidy:\n%s", name, lineDiff(old, f.data))
			untidy = append(untidy, name)
		}
	}
	if len(untidy) > 0 {
		return fmt.Errorf("%d file(s) not tidy: run make tidy", len(untidy))
	}
	return nil
}

// tidyOne returns m's go.mod and go.sum as go mod tidy leaves them.
func tidyOne(ctx context.Context, m Module, mods []Module, ours map[string]bool) (mod, sum []byte, err error) {
	tmpMod, cleanup, err := withSiblings(m, mods)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	if err := goIn(ctx, m.Dir, tmpMod, "mod", "tidy"); err != nil {
		return nil, nil, err
	}
	name := filepath.Join(m.Dir, "go.mod")
	data, err := os.ReadFile(tmpMod)
	if err != nil {
		return nil, nil, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range slices.Clone(f.Replace) {
		if ours[r.Old.Path] && r.Old.Version == "" {
			if err := f.DropReplace(r.Old.Path, ""); err != nil {
				return nil, nil, err
			}
		}
	}
	f.Cleanup()
	sum, err = os.ReadFile(strings.TrimSuffix(tmpMod, ".mod") + ".sum")
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, err
	}
	return modfile.Format(f.Syntax), sum, nil
}

// Vet runs go vet in every module with the versions its own go.mod selects, the other
// modules taken from the checkout. In the workspace every module builds with the
// highest version any of them requires, so a require too low for the code (an API the
// required release lacks) passes there, and fails for a user.
func Vet(ctx context.Context, root string, w io.Writer) error {
	mods, err := Modules(root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		fmt.Fprintf(w, "go vet, outside the workspace (%s)\n", m.Path)
		tmpMod, cleanup, err := withSiblings(m, mods)
		if err != nil {
			return err
		}
		err = goIn(ctx, m.Dir, tmpMod, "vet", "./...")
		cleanup()
		if err != nil {
			return err
		}
	}
	return nil
}

// withSiblings writes a copy of m's go.mod and go.sum into a temporary directory, the
// go.mod with a directory replacement for every other module, and returns the copy's
// path and what removes it.
func withSiblings(m Module, mods []Module) (tmpMod string, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "release-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	name := filepath.Join(m.Dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	for _, o := range mods {
		if o.Path != m.Path {
			if err := f.AddReplace(o.Path, "", o.Dir, ""); err != nil {
				cleanup()
				return "", nil, err
			}
		}
	}
	tmpMod = filepath.Join(tmp, "go.mod")
	if err := os.WriteFile(tmpMod, modfile.Format(f.Syntax), 0o644); err != nil {
		cleanup()
		return "", nil, err
	}
	if s, err := os.ReadFile(filepath.Join(m.Dir, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(tmp, "go.sum"), s, 0o644); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	return tmpMod, cleanup, nil
}

// goIn runs the go command in dir outside the workspace, with modfile as go.mod.
func goIn(ctx context.Context, dir, modFile string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(withoutEnv("GOWORK", "GOFLAGS"), "GOWORK=off", "GOFLAGS=-modfile="+modFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// withoutEnv is the environment without the variables named.
func withoutEnv(names ...string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				return true
			}
		}
		return false
	})
}

// lineDiff lists the lines only in old ("-") and only in new ("+").
func lineDiff(old, new []byte) string {
	count := func(b []byte) map[string]int {
		m := map[string]int{}
		for l := range strings.Lines(string(b)) {
			m[strings.TrimRight(l, "\n")]++
		}
		return m
	}
	o, n := count(old), count(new)
	var b strings.Builder
	for l := range strings.Lines(string(old)) {
		l = strings.TrimRight(l, "\n")
		if n[l] < o[l] {
			fmt.Fprintf(&b, "-%s\n", l)
			o[l]--
		}
	}
	o = count(old)
	for l := range strings.Lines(string(new)) {
		l = strings.TrimRight(l, "\n")
		if o[l] < n[l] {
			fmt.Fprintf(&b, "+%s\n", l)
			n[l]--
		}
	}
	return b.String()
}
