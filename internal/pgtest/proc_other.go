//go:build !unix

package pgtest

import (
	"errors"
	"os/exec"
)

// account is the unprivileged OS account that runs the server processes; on
// non-Unix systems local clusters are not supported.
type account struct{}

func serverAccount() (*account, error) {
	return nil, errors.New("local throwaway clusters are only supported on Unix systems")
}

func (a *account) chown(string) error              { return nil }
func (a *account) String() string                  { return "current user" }
func (a *account) configure(cmd *exec.Cmd, _ bool) {}
func othersCanTraverse(string) bool                { return true }
