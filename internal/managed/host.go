package managed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range) where there is room: a managed server keeps
// its port across restarts, and while it is stopped a port of that range can be taken as
// the local end of any outgoing connection on the machine, which would refuse the restart.
func FreePort() (int, error) {
	if lo := ephemeralLow(); lo-lowestPort >= 1000 {
		for range 64 {
			p := lowestPort + rand.IntN(lo-lowestPort)
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
				l.Close()
				return p, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lowestPort is the lowest port FreePort picks: above the well-known and the most common
// registered ones.
const lowestPort = 10000

// ephemeralLow is the first port of the kernel's ephemeral range (32768, Linux's default,
// where it cannot be read).
func ephemeralLow() int {
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if _, err := fmt.Sscan(string(b), &lo); err != nil {
			return 32768
		}
	}
	return lo
}

// CheckPort returns a clear error when port is already taken on 127.0.0.1.
func CheckPort(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d is in use on 127.0.0.1: choose another with --port, or omit --port to pick a free one", port)
	}
	return l.Close()
}

// Account is the OS identity a managed server process runs as.
type Account struct {
	Name     string
	UID, GID uint32
}

// Credential returns the credential to put in exec.Cmd.SysProcAttr, or nil when no switch
// is needed (dblat is not root).
func (a *Account) Credential() *syscall.Credential {
	if a == nil {
		return nil
	}
	return &syscall.Credential{Uid: a.UID, Gid: a.GID, NoSetGroups: true}
}

// Unprivileged picks the account to run a server as. When dblat does not run as root it
// returns nil (run as ourselves). As root it uses want if given, else the first existing of
// "dblat", "postgres", "nobody": PostgreSQL and MariaDB refuse to run as root.
func Unprivileged(want string) (*Account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	candidates := []string{"dblat", "postgres", "nobody"}
	if want != "" {
		candidates = []string{want}
	}
	for _, name := range candidates {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if uid == 0 {
			return nil, fmt.Errorf("--run-as %s: that user is root; database servers refuse to run as root", name)
		}
		return &Account{Name: name, UID: uint32(uid), GID: uint32(gid)}, nil
	}
	if want != "" {
		return nil, fmt.Errorf("--run-as %s: no such user (create it with `useradd --system %s`)", want, want)
	}
	return nil, errors.New("running as root and no unprivileged user found: create one with `useradd --system dblat`")
}

// Hand gives dir and everything below it to acct, except its credentials directory
// (CredentialsDir), which stays the invoking user's, and makes sure acct can reach dir
// through its parents. A nil acct is a no-op.
func (a *Account) Hand(dir string) error {
	if a == nil {
		return nil
	}
	keep := filepath.Join(dir, CredentialsDir)
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == keep && info.IsDir() {
			return filepath.SkipDir
		}
		return os.Lchown(p, int(a.UID), int(a.GID))
	})
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s is not searchable by user %s (mode %v): use a state directory elsewhere (--state) or `chmod o+x %s`",
				p, a.Name, st.Mode().Perm(), p)
		}
		if p == "/" {
			return nil
		}
	}
}

// ClaimPort gives inst its loopback port before a start: a free one when inst.Port is 0
// (kept across restarts once saved), else a clear error when inst.Port is taken.
func (inst *Instance) ClaimPort() error {
	if inst.Port != 0 {
		return CheckPort(inst.Port)
	}
	p, err := FreePort()
	if err != nil {
		return err
	}
	inst.Port = p
	return nil
}
