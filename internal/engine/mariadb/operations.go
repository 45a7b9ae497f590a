package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
)

var _ engine.Operator = Engine{}

// Operation implements engine.Operator: a backup is mariadb-backup --backup (a hot copy
// of the datadir with the redo log written meanwhile; an encrypted server's key plugin is
// read from the server), a checkpoint flushes the buffer pool's dirty pages until InnoDB's
// checkpoint passes the log sequence number it started at (innodb_max_dirty_pages_pct 0
// meanwhile: MariaDB has no CHECKPOINT statement), an index build is CREATE INDEX, which
// InnoDB builds online (writes go on). InnoDB purges old row versions in the background
// by itself: there is no vacuum to start.
func (Engine) Operation(cfg engine.LaunchConfig, op string) (string, error) {
	switch op {
	case engine.OpBackup:
		tool, err := backupTool(launchBinDir(cfg))
		if err != nil {
			return "", err
		}
		return filepath.Base(tool) + " --backup", nil
	case engine.OpCheckpoint:
		return "innodb_max_dirty_pages_pct=0 until the checkpoint passes the LSN it started at", nil
	case engine.OpIndex:
		return "CREATE INDEX (online)", nil
	case engine.OpVacuum:
		return "", errors.New("MariaDB has no vacuum or sweep to start: InnoDB purges old row versions in the background by itself (MariaDB has backup, checkpoint and index)")
	}
	return "", fmt.Errorf("MariaDB has no operation %q (it has backup, checkpoint and index)", op)
}

// backupTool finds mariadb-backup (or mariabackup): beside mariadbd in dir, else on PATH.
func backupTool(dir string) (string, error) {
	var dirs []string
	if dir != "" {
		dirs = append(dirs, dir, filepath.Join(dir, "..", "bin"))
	}
	for _, d := range dirs {
		for _, n := range []string{"mariadb-backup", "mariabackup"} {
			if p := filepath.Join(d, n); executable(p) {
				return p, nil
			}
		}
	}
	for _, n := range []string{"mariadb-backup", "mariabackup"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("mariadb-backup is not installed: install it with `apt-get install mariadb-backup` (or `make setup`)")
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// duringIndex is the index OpIndex builds and its Undo drops.
const duringIndex = "dblat_during"

// RunOperation implements engine.Operator.
func (Engine) RunOperation(ctx context.Context, req engine.OperationRequest) (engine.OperationResult, error) {
	switch req.Op {
	case engine.OpBackup:
		return backup(ctx, req)
	case engine.OpCheckpoint:
		return checkpoint(ctx, req.DB)
	case engine.OpIndex:
		cols := make([]string, len(req.Columns))
		for i, c := range req.Columns {
			cols[i] = quoteIdent(c)
		}
		res := engine.OperationResult{Detail: fmt.Sprintf("index on %s (%s)", req.Table, strings.Join(req.Columns, ", ")),
			Undo: func(ctx context.Context) error {
				_, err := req.DB.ExecContext(ctx, fmt.Sprintf("DROP INDEX IF EXISTS %s ON %s", duringIndex, quoteIdent(req.Table)))
				return err
			}}
		_, err := req.DB.ExecContext(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", duringIndex, quoteIdent(req.Table), strings.Join(cols, ", ")))
		return res, err
	}
	_, err := Engine{}.Operation(engine.LaunchConfig{}, req.Op)
	return engine.OperationResult{}, err
}

// backup runs mariadb-backup --backup of req's server into req.Dir, logged in as dblat
// with the instance's option file (the password stays in the file), and says how much it
// copied.
func backup(ctx context.Context, req engine.OperationRequest) (engine.OperationResult, error) {
	tool, err := backupTool(req.Server.Binaries)
	if err != nil {
		return engine.OperationResult{}, err
	}
	cmd := exec.CommandContext(ctx, tool, "--defaults-extra-file="+OptionFile(req.Server), // must come first
		"--backup", "--target-dir="+req.Dir, "--datadir="+filepath.Join(req.Server.Dir, "data"))
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return engine.OperationResult{}, ctx.Err()
		}
		return engine.OperationResult{}, fmt.Errorf("%s: %v: %s", filepath.Base(tool), err, lastLines(string(out), 2))
	}
	var size int64
	var files int
	_ = filepath.WalkDir(req.Dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				size += info.Size()
				files++
			}
		}
		return nil
	})
	return engine.OperationResult{Detail: fmt.Sprintf("%s in %d files", engine.FormatBytes(float64(size)), files)}, nil
}

// checkpoint makes InnoDB flush every page that was dirty when it started: with
// innodb_max_dirty_pages_pct at 0 the page cleaner flushes all it can, and the checkpoint
// follows, until Innodb_lsn_last_checkpoint passes the Innodb_lsn_current read at the
// start. The setting is put back however it ends.
func checkpoint(ctx context.Context, db *sql.DB) (engine.OperationResult, error) {
	status := func(name string) (float64, error) {
		var v float64
		err := db.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?",
			strings.ToUpper(name)).Scan(&v)
		return v, err
	}
	var pct string
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct").Scan(&pct); err != nil {
		return engine.OperationResult{}, err
	}
	if _, err := strconv.ParseFloat(pct, 64); err != nil {
		return engine.OperationResult{}, fmt.Errorf("innodb_max_dirty_pages_pct reads %q", pct)
	}
	target, err := status("Innodb_lsn_current")
	if err != nil {
		return engine.OperationResult{}, err
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
		return engine.OperationResult{}, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = "+pct)
	}()
	for {
		at, err := status("Innodb_lsn_last_checkpoint")
		if err != nil {
			return engine.OperationResult{}, err
		}
		if at >= target {
			return engine.OperationResult{Detail: fmt.Sprintf("checkpoint at LSN %.0f", at)}, nil
		}
		select {
		case <-ctx.Done():
			return engine.OperationResult{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
