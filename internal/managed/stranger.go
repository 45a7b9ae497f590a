package managed

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

// Stranger is an OS account that is neither the user dblat runs as nor a managed server's
// account: another user of the machine. Tests run client programs as it to check that a
// managed server lets it in only with the credentials its owner handed over (Give).
type Stranger struct {
	Account
	// Home is a directory of its own (mode 0700), removed by Close.
	Home string
}

// StrangerName is the account NewStranger uses: every Debian and Ubuntu system has it.
const StrangerName = "nobody"

// NewStranger returns the account "nobody" as a Stranger with a fresh home directory. It
// needs root (only root runs programs as another account), and nobody must not be
// serverAccount, the account the servers under test run as (managed.Unprivileged picks
// nobody when neither dblat nor postgres exists).
func NewStranger(serverAccount string) (*Stranger, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("running programs as another account needs root")
	}
	if serverAccount == StrangerName {
		return nil, fmt.Errorf("the servers run as %s, so %s is no stranger to them: create their own account with `useradd --system dblat`", StrangerName, StrangerName)
	}
	u, err := user.Lookup(StrangerName)
	if err != nil {
		return nil, fmt.Errorf("no account %s to act as another user: create one with `useradd --system %s`", StrangerName, StrangerName)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	home, err := os.MkdirTemp("", "dblat-stranger-")
	if err != nil {
		return nil, err
	}
	s := &Stranger{Account: Account{Name: StrangerName, UID: uint32(uid), GID: uint32(gid)}, Home: home}
	if err := os.Chown(home, uid, gid); err != nil {
		_ = os.RemoveAll(home)
		return nil, err
	}
	return s, nil
}

// Command prepares program name to run as the stranger, in its home, with no supplementary
// groups and an environment of PATH, HOME and LC_ALL only: nothing of the caller's
// (PGPASSFILE, ISC_PASSWORD, MYSQL_PWD, ...) reaches it.
func (s *Stranger) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.Home
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + s.Home, "LC_ALL=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: s.UID, Gid: s.GID, Groups: []uint32{}}}
	return cmd
}

// Give copies the file at path into the stranger's home, its own and mode 0600, as the
// owner of a server hands its credentials to another user, and returns the copy's path.
func (s *Stranger) Give(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(s.Home, filepath.Base(path))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return "", err
	}
	return dst, os.Chown(dst, int(s.UID), int(s.GID))
}

// Close removes the stranger's home.
func (s *Stranger) Close() error { return os.RemoveAll(s.Home) }
