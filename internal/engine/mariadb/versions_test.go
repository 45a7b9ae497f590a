package mariadb_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
)

// TestInspectRecordsBuild: every run records the server build's word size and instruction
// set, which the credibility checks compare (seed 002's 32- against 64-bit builds).
func TestInspectRecordsBuild(t *testing.T) {
	dsn := mariadbtest.NewDatabase(t)
	ctx := context.Background()
	db, err := mariadb.Engine{}.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := mariadb.Engine{}.Inspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	arch := info.Settings["version_compile_machine"]
	if arch == "" || info.Settings[engine.SettingArch] != arch || info.Settings[engine.SettingBits] != "64" {
		t.Errorf("version_compile_machine %q gave arch %q, %q bits", arch, info.Settings[engine.SettingArch], info.Settings[engine.SettingBits])
	}
	for _, k := range []string{"log_bin", "sync_binlog", "innodb_flush_log_at_trx_commit", "binlog_format"} {
		if _, ok := info.Settings[k]; !ok {
			t.Errorf("no %s among the settings read back", k)
		}
	}
}

// TestMySQLInstallIsRefused: a MySQL tarball's base directory given as an installation is
// refused with the reason, before anything starts.
func TestMySQLInstallIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)'\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "mysqld"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err := mariadb.Engine{}.CheckSettings(engine.LaunchConfig{Install: dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "is MySQL, not MariaDB") || !strings.Contains(err.Error(), "--target mysql://") {
		t.Errorf("CheckSettings of a MySQL installation: %v", err)
	}
	err = mariadb.Engine{}.CheckSettings(engine.LaunchConfig{Install: t.TempDir()}, nil)
	if err == nil || !strings.Contains(err.Error(), "--install") {
		t.Errorf("CheckSettings of an empty directory: %v", err)
	}
}
