package contract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jobc-dev/jobc/generator/spec"
)

// maxBaselineFile bounds the size of one file taken from git: spec and schema files
// are small, and a larger one is not read by spec.Load either.
const maxBaselineFile = 8 << 20

// GitBaseline builds the baseline of released contracts from the spec as it was at a
// git revision, instead of from jobc.lock: it copies the project's YAML and JSON files
// at ref (the config, included job files, schema files) into a temporary directory,
// loads the spec there and locks it. A spec reads no file outside its project
// directory (spec.Load refuses a $ref or include that leaves it), so no other file of
// the repository is copied. Positions in findings about the baseline read
// "<ref>:<file>:<line>:<col>", the file relative to the project directory. A revision
// without the project's config file has released nothing: the baseline is empty.
func GitBaseline(ctx context.Context, dir, ref string) (*LockFile, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return nil, fmt.Errorf("jobc: --against %q: not a git revision", ref)
	}
	out, err := git(ctx, dir, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("jobc: --against %s: %w", ref, err)
	}
	prefix := strings.TrimSpace(string(out))
	if _, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		return nil, fmt.Errorf("jobc: --against %s: not a commit in this repository", ref)
	}
	files, err := specFiles(ctx, dir, ref)
	if err != nil {
		return nil, fmt.Errorf("jobc: --against %s: %w", ref, err)
	}
	var inProject []blob
	for _, f := range files {
		if strings.HasPrefix(f.path, prefix) {
			inProject = append(inProject, f)
		}
	}
	base := &LockFile{Format: lockFormat, Jobs: map[string]*LockedJob{}, Source: ref}
	if !hasConfig(inProject, prefix) {
		return base, nil
	}
	tmp, err := os.MkdirTemp("", "jobc-baseline-")
	if err != nil {
		return nil, fmt.Errorf("jobc: --against %s: %w", ref, err)
	}
	defer os.RemoveAll(tmp)
	if err := fetchBlobs(ctx, dir, tmp, inProject); err != nil {
		return nil, fmt.Errorf("jobc: --against %s: %w", ref, err)
	}
	projectDir := filepath.Join(tmp, filepath.FromSlash(prefix))
	p, err := spec.Load(projectDir)
	if err != nil {
		var ds spec.Diagnostics
		if errors.As(err, &ds) {
			for i := range ds {
				ds[i].File = ref + ":" + ds[i].File
			}
			return nil, fmt.Errorf("jobc: --against %s: the spec at that revision does not load:\n%w", ref, ds)
		}
		return nil, fmt.Errorf("jobc: --against %s: %w", ref, err)
	}
	l, err := Lock(p)
	if err != nil {
		return nil, err
	}
	l.Source = ref
	for _, contracts := range []map[string]*LockedJob{l.Jobs, l.Events} {
		for _, lj := range contracts {
			lj.pos.File = ref + ":" + lj.pos.File
			for i := range lj.Versions {
				lj.Versions[i].pos.File = ref + ":" + lj.Versions[i].pos.File
			}
		}
	}
	return l, nil
}

// blob is a YAML or JSON file of the repository at the revision.
type blob struct {
	oid  string
	path string // relative to the repository's root, slash-separated
}

// specFiles lists the repository's YAML and JSON files at ref.
func specFiles(ctx context.Context, dir, ref string) ([]blob, error) {
	out, err := git(ctx, dir, nil, "ls-tree", "-r", "-z", "-l", "--full-tree", ref)
	if err != nil {
		return nil, err
	}
	var files []blob
	for _, entry := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(entry), "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta) // mode, type, object, size
		if len(f) != 4 || f[1] != "blob" || f[0] == "120000" {
			continue // a tree, a submodule or a symbolic link
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil || size > maxBaselineFile {
			continue
		}
		switch strings.ToLower(path.Ext(name)) {
		case ".yaml", ".yml", ".json":
			files = append(files, blob{oid: f[2], path: name})
		}
	}
	return files, nil
}

func hasConfig(files []blob, prefix string) bool {
	for _, f := range files {
		for _, n := range spec.ConfigNames() {
			if f.path == prefix+n {
				return true
			}
		}
	}
	return false
}

// fetchBlobs writes the files at their paths under dst with one `git cat-file --batch`.
func fetchBlobs(ctx context.Context, dir, dst string, files []blob) error {
	var in bytes.Buffer
	for _, f := range files {
		in.WriteString(f.oid + "\n")
	}
	out, err := git(ctx, dir, &in, "cat-file", "--batch")
	if err != nil {
		return err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, f := range files {
		header, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		fields := strings.Fields(header) // object, type, size
		if len(fields) != 3 {
			return fmt.Errorf("git cat-file: unexpected header %q for %s", strings.TrimSpace(header), f.path)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil {
			return fmt.Errorf("git cat-file: unexpected header %q for %s", strings.TrimSpace(header), f.path)
		}
		content := make([]byte, size+1) // the content and its trailing newline
		if _, err := io.ReadFull(r, content); err != nil {
			return fmt.Errorf("git cat-file: %s: %w", f.path, err)
		}
		target := filepath.Join(dst, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
		if err := os.WriteFile(target, content[:size], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}

// git runs a git command in dir and returns its standard output.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %s", args[0], msg)
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}
