package firebird_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nakagami/firebirdsql"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/tpcc"
)

// BenchmarkRestore compares the two ways of keeping and restoring a pristine copy of a
// 10-warehouse database on the managed Super server: a file copy while the server holds the
// file closed (SavePristine, RestorePristine), and nbackup through the services API (a
// level-0 backup; a restore to a new file, renamed over the database while it is closed).
// The metric is MB of database per second.
//
//	go test ./internal/engine/firebird -run '^$' -bench Restore -benchtime 3x -timeout 30m
func BenchmarkRestore(b *testing.B) {
	ctx := context.Background()
	e := firebird.Engine{}
	inst := fbtest.Server(b, "Super")
	dsn := fbtest.NewDatabase(b, "Super")
	db, err := e.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := tpcc.Load(ctx, workload.Target{Engine: e, DB: db}, tpcc.LoadConfig{Warehouses: 10, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	db.Close()
	path := dbPath(b, dsn)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	mb := float64(st.Size()) / 1e6
	b.Logf("10 warehouses: %.0f MB", mb)
	backup := path + ".nbk"
	restored := path + ".nrest"
	b.Cleanup(func() {
		for _, f := range []string{path + ".pristine", backup, restored} {
			os.Remove(f)
		}
	})
	pw, err := os.ReadFile(firebird.PasswordFile(inst))
	if err != nil {
		b.Fatal(err)
	}
	nb, err := firebirdsql.NewNBackupManager(fmt.Sprintf("127.0.0.1:%d", inst.Port), "SYSDBA", strings.TrimSpace(string(pw)),
		firebirdsql.GetDefaultServiceManagerOptions())
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B) { b.ReportMetric(mb*float64(b.N)/b.Elapsed().Seconds(), "MB/s") }
	b.Run("copy/save", func(b *testing.B) {
		for b.Loop() {
			if err := e.SavePristine(ctx, dsn); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("copy/restore", func(b *testing.B) {
		for b.Loop() {
			if err := e.RestorePristine(ctx, dsn); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("nbackup/backup", func(b *testing.B) {
		for b.Loop() {
			os.Remove(backup)
			if err := nb.Backup(path, backup, firebirdsql.NewNBackupOptions(firebirdsql.WithLevel(0)), nil); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("nbackup/restore", func(b *testing.B) {
		for b.Loop() {
			os.Remove(restored)
			if err := nb.Restore([]string{backup}, restored, firebirdsql.NewNBackupOptions(), nil); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(restored, path); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	// The database restored last must be whole.
	db, err = e.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if n, err := tpcc.LoadedWarehouses(ctx, db); err != nil || n != 10 {
		b.Errorf("after the restores: %d warehouses, %v", n, err)
	}
}
