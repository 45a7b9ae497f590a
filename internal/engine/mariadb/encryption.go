package mariadb

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
)

var (
	_ engine.CacheSizer = Engine{}
	_ engine.Encrypter  = Engine{}
)

// A managed server created with encryption (managed.Instance.Encrypted) keeps its InnoDB
// tablespaces and its redo log encrypted at rest, with the file_key_management plugin
// and one AES-256 key, which dblat generates when the server is made and keeps in
// keys/keyfile of the instance directory (mode 0600, the server's account's: it is the
// only copy; the data is unreadable without it). New tables are encrypted as they are
// created (innodb_encrypt_tables=ON), the redo log as it is written (innodb_encrypt_log),
// and one background thread encrypts the tablespaces made before (the system
// tablespace, mysql's tables). Inspect reads back the settings and how many of the
// database's tablespaces are encrypted (SettingTablespacesEncrypted).
const (
	keyDir  = "keys"
	keyFile = "keyfile"
	// keyPlugin is the key management plugin's library.
	keyPlugin = "file_key_management"
)

// SettingTablespacesEncrypted is the read-back setting (Inspect) that says how many of
// the benchmark database's InnoDB tablespaces are encrypted: "9 of 9"
// (INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION).
const SettingTablespacesEncrypted = "innodb_tablespaces_encrypted"

// KeyFile returns the path of inst's encryption key file.
func KeyFile(inst *managed.Instance) string { return filepath.Join(inst.Dir, keyDir, keyFile) }

// CanEncrypt implements engine.Encrypter: the server's plugin directory must hold the
// file_key_management plugin (Debian's mariadb-server ships it).
func (Engine) CanEncrypt(cfg engine.LaunchConfig) error {
	l := Launcher{BinDir: launchBinDir(cfg)}
	bins, err := FindBinaries(l.BinDir)
	if err != nil {
		return err
	}
	dir, err := l.pluginDir(bins)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, keyPlugin+".so")); err != nil {
		return fmt.Errorf("the %s plugin is not in %s, the server's plugin directory: install a MariaDB server that ships it (Debian's mariadb-server does)", keyPlugin, dir)
	}
	return nil
}

// pluginDir is the plugin directory mariadbd reports for itself.
func (l Launcher) pluginDir(bins Binaries) (string, error) {
	out, err := exec.Command(bins.Server, l.withBasedir(bins, []string{"--no-defaults", "--verbose", "--help"})...).Output()
	if err != nil {
		return "", fmt.Errorf("%s --help: %w", bins.Server, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "plugin-dir" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s --help names no plugin-dir", bins.Server)
}

// encryptionArgs are the options of an encrypted server, with its key file made if it
// has none (once, when the server is made: a new key would leave its data unreadable).
func encryptionArgs(inst *managed.Instance, acct *managed.Account) ([]string, error) {
	path := KeyFile(inst)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		// "ID;HEX": key 1, the one InnoDB uses by default (innodb_default_encryption_key_id).
		if err := os.WriteFile(path, []byte("1;"+hex.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if err := acct.Hand(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return []string{
		"--plugin-load-add=" + keyPlugin,
		"--file-key-management-filename=" + path,
		"--innodb-encrypt-tables=ON",
		"--innodb-encrypt-log=ON",
		"--innodb-encryption-threads=1",
	}, nil
}

// tablespacesEncrypted says how many of the current database's InnoDB tablespaces are
// encrypted, "N of M"; "" when the server has no encryption information (no key plugin).
func tablespacesEncrypted(ctx context.Context, db *sql.DB) string {
	var enc, all int
	err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(e.ENCRYPTION_SCHEME <> 0), 0), COUNT(*)
		FROM information_schema.INNODB_TABLESPACES_ENCRYPTION e
		WHERE e.NAME LIKE CONCAT(DATABASE(), '/%')`).Scan(&enc, &all)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d of %d", enc, all)
}

// RequestedCache implements engine.CacheSizer: innodb_buffer_pool_size, 128 MiB by
// default.
func (Engine) RequestedCache(settings map[string]string) (string, int64, error) {
	const name = "innodb_buffer_pool_size"
	for k, v := range settings {
		if optionName(k) == "innodb-buffer-pool-size" {
			b, ok := parseSize(strings.TrimSpace(v))
			if !ok {
				return name, 0, fmt.Errorf("%s=%s is not a size", k, v)
			}
			return name, int64(b), nil
		}
	}
	return name, defaultBufferPool, nil
}

// cacheIO implements engine.Comparison.IO from SHOW GLOBAL STATUS: the buffer pool's reads
// from the data files and its read requests, and the transactions committed or rolled back
// (Handler_commit counts InnoDB's own commits, those of statements in autocommit and of
// stored procedures too).
func cacheIO(d map[string]float64) (engine.IO, bool) {
	reads, ok1 := d["status.Innodb_buffer_pool_reads"]
	reqs, ok2 := d["status.Innodb_buffer_pool_read_requests"]
	commits, ok3 := d["status.Com_commit"]
	if !ok1 || !ok2 || !ok3 {
		return engine.IO{}, false
	}
	tx := commits + d["status.Com_rollback"]
	return engine.IO{Reads: reads, Lookups: reqs, Transactions: tx}, true
}
