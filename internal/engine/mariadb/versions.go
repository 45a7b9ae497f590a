package mariadb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
)

// Versions and installations. The engine runs any MariaDB from an installation of the
// user's (server start --install, studies' server.install): a MariaDB binary tarball's
// base directory (bin/mariadbd, scripts/mariadb-install-db, share/) or a directory holding
// mariadbd and mariadb-install-db. It fetches none itself.
//
// MySQL is not managed: MySQL 8's tarballs have no mysql_install_db (the data directory is
// made by mysqld --initialize-insecure), write a binary log unless told not to, and differ
// in options dblat sets (thread_handling, the query cache), so they would need an engine
// package of their own beside this one. A mysqld that says it is MySQL is refused with
// that explanation; benchmark a MySQL server you started with --target mysql://....

// installBinDir is the directory of mariadbd in installation dir: dir/bin in a tarball's
// base directory, else dir itself.
func installBinDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	for _, n := range []string{"mariadbd", "mysqld"} {
		if st, err := os.Stat(filepath.Join(abs, "bin", n)); err == nil && !st.IsDir() {
			return filepath.Join(abs, "bin")
		}
	}
	return abs
}

// launchBinDir is the directory of mariadbd a launch configuration names: its
// installation's, else BinDir.
func launchBinDir(cfg engine.LaunchConfig) string {
	if cfg.Install != "" {
		return installBinDir(cfg.Install)
	}
	return cfg.BinDir
}

// isMySQL reports whether server says it is MySQL rather than MariaDB (mysqld --version:
// "mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)").
func isMySQL(server string) bool {
	out, err := exec.Command(server, "--version").Output()
	return err == nil && !strings.Contains(string(out), "MariaDB") && strings.Contains(string(out), "MySQL")
}

func mysqlError(server string) error {
	return fmt.Errorf("%s is MySQL, not MariaDB: dblat manages MariaDB servers only (MySQL 8 initializes and configures differently; see the mariadb package's doc); start MySQL yourself and use --target mysql://user@host:port/db", server)
}

// buildSettings adds engine.SettingBits and SettingArch from version_compile_machine
// ("x86_64", "i686", "aarch64") to read-back settings that hold it.
func buildSettings(settings map[string]string) {
	arch := strings.TrimSpace(settings["version_compile_machine"])
	if arch == "" {
		return
	}
	settings[engine.SettingArch] = arch
	if n := engine.ArchBits(arch); n > 0 {
		settings[engine.SettingBits] = strconv.Itoa(n)
	}
}

// pageSize implements Comparison.PageSize: InnoDB's page size.
func pageSize(settings map[string]string) (string, float64, bool) {
	const name = "innodb_page_size"
	b, ok := engine.SettingBytes(settings[name], 1)
	return name, b, ok
}

// withBasedir puts --basedir after --no-defaults in mariadbd's arguments when the server
// runs from a directory of the user's (--install, --bin-dir) whose parent holds share/: a
// tarball's mariadbd looks for its messages and character sets below the base directory it
// was compiled for (/usr/local/mysql) unless told otherwise, as mariadb-install-db is.
func (l Launcher) withBasedir(bins Binaries, args []string) []string {
	if l.BinDir == "" || len(args) == 0 {
		return args
	}
	base := filepath.Dir(filepath.Dir(bins.Server))
	if st, err := os.Stat(filepath.Join(base, "share")); err != nil || !st.IsDir() {
		return args
	}
	return append([]string{args[0], "--basedir=" + base}, args[1:]...)
}
