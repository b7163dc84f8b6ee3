//go:build unix

package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// account is the unprivileged OS account that runs initdb, pg_ctl and
// postgres when the test process runs as root (both refuse to run as root).
// A nil *account means "run as the current user".
type account struct {
	name     string
	uid, gid uint32
}

// serverAccount returns the account to run the server as: nil unless the
// effective user is root, then user postgres or, failing that, nobody.
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			errs = append(errs, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err))
			continue
		}
		gid, err := strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			errs = append(errs, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err))
			continue
		}
		return &account{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root, which initdb and postgres refuse, and no unprivileged user to run them as: %w", errors.Join(errs...))
}

// chown hands path over to the account; a no-op for a nil account.
func (a *account) chown(path string) error {
	if a == nil {
		return nil
	}
	if err := os.Chown(path, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("chown %s to user %s: %w", path, a.name, err)
	}
	return nil
}

// String names the account for log messages.
func (a *account) String() string {
	if a == nil {
		return "current user"
	}
	return "user " + a.name
}

// configure makes cmd run as the account. With ownGroup the process also gets
// its own process group, so that a terminal's Ctrl-C (sent to the foreground
// group) does not reach it.
func (a *account) configure(cmd *exec.Cmd, ownGroup bool) {
	attr := &syscall.SysProcAttr{Setpgid: ownGroup}
	if a != nil {
		// Groups left nil drops root's supplementary groups.
		attr.Credential = &syscall.Credential{Uid: a.uid, Gid: a.gid}
	}
	cmd.SysProcAttr = attr
}

// othersCanTraverse reports whether users other than the owner can reach
// entries below dir, which the server account needs for its temp directory.
func othersCanTraverse(dir string) bool {
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
