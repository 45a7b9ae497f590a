package managed

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CredentialsDir is the directory of an instance that holds its credentials: a generated
// password per account of the server (USER.password) and the files its clients read them
// from (a pgpass file, a MySQL option file). It and its files belong to the user dblat runs
// as, mode 0700 and 0600: Account.Hand leaves them alone, so that neither the server's
// account nor any other can read them. DSNs name these files, never the passwords.
const CredentialsDir = "credentials"

// CredentialsFile returns the path of file name in inst's credentials directory.
func (inst *Instance) CredentialsFile(name string) string {
	return filepath.Join(inst.Dir, CredentialsDir, name)
}

// HasCredentials reports whether inst's credentials directory holds any file: false for a
// new instance, and for one made by a dblat from before managed servers had credentials.
func (inst *Instance) HasCredentials() bool {
	entries, err := os.ReadDir(filepath.Join(inst.Dir, CredentialsDir))
	return err == nil && len(entries) > 0
}

// PasswordFile returns the path of the file of inst's credentials directory that holds the
// password of the server's account user: USER.password, in lower case.
func (inst *Instance) PasswordFile(user string) string {
	return inst.CredentialsFile(strings.ToLower(user) + ".password")
}

// Password returns the password of the server's account user kept in inst's credentials
// directory, and false when there is none.
func (inst *Instance) Password(user string) (string, bool, error) {
	b, err := os.ReadFile(inst.PasswordFile(user))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	pw := strings.TrimSpace(string(b))
	if pw == "" {
		return "", false, fmt.Errorf("%s is empty: remove it, and the server directory %s with it, to start afresh", inst.PasswordFile(user), inst.Dir)
	}
	return pw, true, nil
}

// NewPassword returns a new password: 128 random bits in hex, safe inside SQL quotes, URLs,
// pgpass and option files, and beyond any brute force.
func NewPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// SavePassword keeps pw as the password of the server's account user in inst's credentials
// directory, replacing an older one.
func (inst *Instance) SavePassword(user, pw string) error {
	return inst.WriteCredentials(filepath.Base(inst.PasswordFile(user)), []byte(pw+"\n"))
}

// WriteCredentials writes file name of inst's credentials directory atomically, mode 0600,
// owned by the user dblat runs as; it makes the directory (mode 0700) when missing.
func (inst *Instance) WriteCredentials(name string, data []byte) error {
	dir := filepath.Join(inst.Dir, CredentialsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// A directory made by hand, or by a umask that MkdirAll obeyed, is closed all the same.
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600) // CreateTemp's mode, made explicit
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
