package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dblat/dblat/internal/engine"
)

var (
	_ engine.CacheSizer = Engine{}
	_ engine.Encrypter  = Engine{}
	_ engine.Operator   = Engine{}
)

// RequestedCache implements engine.CacheSizer: shared_buffers (a size, or a count of 8 kB
// pages), 128 MB by default.
func (Engine) RequestedCache(settings map[string]string) (string, int64, error) {
	const name = "shared_buffers"
	v, ok := engine.LookupSetting(settings, name)
	if !ok {
		return name, defaultSharedBuffers, nil
	}
	b, ok := engine.SettingBytes(v, 8192)
	if !ok {
		return name, 0, fmt.Errorf("%s=%s is not a size", name, v)
	}
	return name, int64(b), nil
}

// CanEncrypt implements engine.Encrypter: PostgreSQL's community server has no
// encryption at rest.
func (Engine) CanEncrypt(engine.LaunchConfig) error {
	return errors.New("PostgreSQL's community server has no encryption at rest (no transparent data encryption): encrypt the file system below its data directory, or compare on MariaDB, whose InnoDB encrypts its tablespaces")
}

// Operation implements engine.Operator: a backup is pg_basebackup of the whole cluster
// (plain format, the WAL streamed beside it, after an immediate checkpoint so that it
// starts at once), a vacuum VACUUM of the run's database, a checkpoint CHECKPOINT, an
// index build CREATE INDEX CONCURRENTLY (which lets writes go on).
func (Engine) Operation(_ engine.LaunchConfig, op string) (string, error) {
	switch op {
	case engine.OpBackup:
		return "pg_basebackup -X stream -c fast (the server's own pg_basebackup, else the one on PATH)", nil
	case engine.OpVacuum:
		return "VACUUM of the run's database", nil
	case engine.OpCheckpoint:
		return "CHECKPOINT", nil
	case engine.OpIndex:
		return "CREATE INDEX CONCURRENTLY", nil
	}
	return "", fmt.Errorf("PostgreSQL has no operation %q (it has backup, vacuum, checkpoint and index)", op)
}

// duringIndex is the index OpIndex builds and its Undo drops.
const duringIndex = "dblat_during"

// RunOperation implements engine.Operator.
func (Engine) RunOperation(ctx context.Context, req engine.OperationRequest) (engine.OperationResult, error) {
	switch req.Op {
	case engine.OpBackup:
		return baseBackup(ctx, req)
	case engine.OpVacuum:
		_, err := req.DB.ExecContext(ctx, "VACUUM")
		return engine.OperationResult{Detail: "vacuumed"}, err
	case engine.OpCheckpoint:
		_, err := req.DB.ExecContext(ctx, "CHECKPOINT")
		return engine.OperationResult{Detail: "checkpointed"}, err
	case engine.OpIndex:
		cols := make([]string, len(req.Columns))
		for i, c := range req.Columns {
			cols[i] = pgx.Identifier{c}.Sanitize()
		}
		res := engine.OperationResult{Detail: fmt.Sprintf("index on %s (%s)", req.Table, strings.Join(req.Columns, ", ")),
			Undo: func(ctx context.Context) error {
				_, err := req.DB.ExecContext(ctx, "DROP INDEX IF EXISTS "+duringIndex)
				return err
			}}
		_, err := req.DB.ExecContext(ctx, fmt.Sprintf("CREATE INDEX CONCURRENTLY %s ON %s (%s)", duringIndex,
			pgx.Identifier{req.Table}.Sanitize(), strings.Join(cols, ", ")))
		return res, err
	}
	return engine.OperationResult{}, fmt.Errorf("PostgreSQL has no operation %q", req.Op)
}

// baseBackup runs pg_basebackup of req's server into req.Dir as a client over TCP,
// logged in as the superuser with the password from the instance's pgpass file (the DSN
// names it), and says how much it copied.
func baseBackup(ctx context.Context, req engine.OperationRequest) (engine.OperationResult, error) {
	tool := filepath.Join(req.Server.Binaries, "pg_basebackup")
	if _, err := os.Stat(tool); err != nil {
		if tool, err = exec.LookPath("pg_basebackup"); err != nil {
			return engine.OperationResult{}, fmt.Errorf("pg_basebackup is not in %s nor on PATH: %s", req.Server.Binaries, InstallHint)
		}
	}
	target := filepath.Join(req.Dir, "base")
	cmd := exec.CommandContext(ctx, tool, "-d", DatabaseDSN(req.Server, "dblat"), "-D", target, "-X", "stream", "-c", "fast")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return engine.OperationResult{}, ctx.Err()
		}
		return engine.OperationResult{}, fmt.Errorf("pg_basebackup: %v: %s", err, lastLines(string(out), 2))
	}
	size, files := dirSize(target)
	return engine.OperationResult{Detail: fmt.Sprintf("%s in %d files", engine.FormatBytes(float64(size)), files)}, nil
}

// dirSize is the bytes and number of the regular files below dir.
func dirSize(dir string) (size int64, files int) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				size += info.Size()
				files++
			}
		}
		return nil
	})
	return size, files
}

// cacheIO implements engine.Comparison.IO from pg_stat_database's counters of the run's
// database: blocks read from outside shared_buffers, blocks looked up (read or hit), and
// the transactions committed or rolled back.
func cacheIO(d map[string]float64) (engine.IO, bool) {
	read, ok1 := d["pg_stat_database.blks_read"]
	hit, ok2 := d["pg_stat_database.blks_hit"]
	commit, ok3 := d["pg_stat_database.xact_commit"]
	if !ok1 || !ok2 || !ok3 {
		return engine.IO{}, false
	}
	return engine.IO{Reads: read, Lookups: read + hit, Transactions: commit + d["pg_stat_database.xact_rollback"]}, true
}
