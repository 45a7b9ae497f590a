package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
)

// TestVersionsInstallAndRun fetches PostgreSQL 13 and 17 with the engine's Installer (as
// `dblat server install` does; a cache shared between test runs keeps it to one fetch per
// machine), starts a managed server of each with LaunchConfig.Version, and reads back its
// version, build and statistics: the views Stats reads moved between these versions.
func TestVersionsInstallAndRun(t *testing.T) {
	pgtest.Server(t) // skips or fails, as the suite asks, without PostgreSQL
	state := pgtest.StateDir(t)
	ctx := context.Background()
	e := postgres.Engine{}
	for _, v := range []string{"13", "17"} {
		t.Run(v, func(t *testing.T) {
			cfg := engine.LaunchConfig{StateDir: state, Version: v}
			dir, err := e.Install(ctx, cfg, v)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := e.Installed(cfg, v); !ok || got != dir {
				t.Errorf("Installed(%s) = %q, %v after Install gave %q", v, got, ok, dir)
			}
			if err := e.CheckSettings(cfg, map[string]string{"shared_buffer": "64MB"}); err == nil ||
				!strings.Contains(err.Error(), "shared_buffers") {
				t.Errorf("CheckSettings of a misspelt setting on %s: %v", v, err)
			}
			inst := &managed.Instance{Name: "v" + v, Engine: "postgres", Dir: filepath.Join(state, "servers", "v"+v),
				Settings: map[string]string{"fsync": "off", "shared_buffers": "64MB"}}
			if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			l := e.Launcher(cfg)
			sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if err := l.Start(sctx, inst); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = l.Stop(ctx, inst) }()
			if inst.Binaries != filepath.Join(dir, "bin") {
				t.Errorf("server runs %s, want the installed %s", inst.Binaries, dir)
			}
			db, err := e.Open(ctx, inst.DSN, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			info, err := e.Inspect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(info.Version, "PostgreSQL "+v+".") || info.Settings["shared_buffers"] != "8192 8kB" {
				t.Errorf("version %q, shared_buffers %q", info.Version, info.Settings["shared_buffers"])
			}
			if info.Settings[engine.SettingBits] != "64" || info.Settings[engine.SettingArch] == "" {
				t.Errorf("build %q bits, arch %q from %q", info.Settings[engine.SettingBits], info.Settings[engine.SettingArch], info.Version)
			}
			st, err := e.Stats(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{ // counters each version's views have
				"13": {"pg_stat_database.xact_commit", "pg_stat_bgwriter.checkpoints_req"},
				"17": {"pg_stat_database.xact_commit", "pg_stat_checkpointer.num_requested", "pg_stat_wal.wal_bytes"},
			}[v]
			for _, k := range want {
				if _, ok := st[k]; !ok {
					t.Errorf("no %s in the statistics of %s: %v", k, v, st)
				}
			}
		})
	}
	if err := e.CheckSettings(engine.LaunchConfig{StateDir: state, Version: "9"}, nil); err == nil ||
		!strings.Contains(err.Error(), "13, 14, 15, 16, 17, 18") {
		t.Errorf("CheckSettings of version 9: %v", err)
	}
}
