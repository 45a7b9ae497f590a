package script

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
)

// Data. A script workload runs on one of three kinds of data:
//
//   - what its init script made (--init FILE; init: in a study): `dblat load script` runs
//     the script once, as one client of the simple protocol with :scale set, each
//     statement outside a BEGIN committed on its own (DDL included), and records the
//     script's SHA-256 and the scale in the table dblat_script_meta. A run that names the
//     init finds its data loaded when that table holds the same text's hash; a study loads
//     again when the text changed. The script must be rerunnable: it drops (or, on
//     Firebird, RECREATEs) what it creates.
//   - pgbench's tables, for built-in scripts (-b): `dblat load simple tpcb`'s, which a
//     study loads when a cell runs built-in scripts and names no init.
//   - the user's own, loaded by other means: nothing is loaded or checked, and :scale is
//     what the run says (1 by default), as with pgbench's custom scripts.

// metaTable records the last init script loaded.
const metaTable = "dblat_script_meta"

// load implements Definition.Load.
func load(ctx context.Context, t workload.Target, cfg workload.LoadConfig) error {
	scale := max(cfg.Scale, 1)
	switch {
	case cfg.Init != "":
		return runInit(ctx, t, cfg, scale)
	case len(cfg.Builtins) > 0:
		return simple.Load(ctx, t, simple.LoadConfig{Workload: "tpcb", Scale: scale, Seed: cfg.Seed, Workers: cfg.Workers,
			Progress: cfg.Progress})
	}
	return option.Errorf("init", "is missing: give the script that creates and fills your tables (--init FILE; init: in a study), or run on data you loaded yourself without `dblat load`")
}

// loaded implements Definition.Loaded.
func loaded(ctx context.Context, t workload.Target, cfg workload.Config) (int, error) {
	switch {
	case cfg.Init != "":
		src, err := resolve(cfg.Files, "init", cfg.Init, t.Engine.Name())
		if err != nil {
			return 0, err
		}
		sum, scale, err := readMeta(ctx, t.DB)
		switch {
		case err != nil:
			return 0, fmt.Errorf("%w: no init script was loaded (%v)", workload.ErrNotLoaded, workload.FirstLine(err))
		case sum != textSum(src.text):
			return 0, fmt.Errorf("%w: the data was loaded by another init script than %s (or by an earlier version of it)", workload.ErrNotLoaded, src.where)
		}
		return scale, nil
	case len(cfg.Builtins) > 0:
		info, err := simple.Loaded(ctx, t.DB, "tpcb")
		if err != nil {
			return 0, fmt.Errorf("built-in scripts run on pgbench's tables, and %w", err)
		}
		return info.Scale, nil
	}
	return max(cfg.Scale, 1), nil
}

// runInit runs the init script as one client and records it.
func runInit(ctx context.Context, t workload.Target, cfg workload.LoadConfig, scale int) error {
	src, err := resolve(cfg.Files, "init", cfg.Init, t.Engine.Name())
	if err != nil {
		return err
	}
	w, err := newWorkload(t.Engine, "simple")
	if err != nil {
		return err
	}
	w.cfg.Defines = cfg.Defines
	e, err := w.parse(src, workload.SourceInit, 1, slices.Sorted(maps.Keys(cfg.Defines)))
	if err != nil {
		return err
	}
	seeds, defaultSeed := PgbenchSeeds(uint64(cfg.Seed), 1)
	c, err := NewClient(Config{Scale: int64(scale), RandomSeed: cfg.Seed, DefaultSeed: defaultSeed, Seed: seeds[0],
		Defines: cfg.Defines, Mode: w.mode, Placeholder: w.place})
	if err != nil {
		return err
	}
	conn, err := t.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	term := w.terminal(c, nil)
	term.cur = e
	c.Begin(e.s)
	if err := term.Run(ctx, conn); err != nil {
		return err
	}
	w.Close()
	return writeMeta(ctx, t, textSum(src.text), src.path, scale)
}

func textSum(text []byte) string {
	s := sha256.Sum256(text)
	return hex.EncodeToString(s[:])
}

// writeMeta replaces the record of the last init script loaded.
func writeMeta(ctx context.Context, t workload.Target, sum, path string, scale int) error {
	d := t.Engine.Dialect()
	drop := "DROP TABLE " + metaTable
	if d.DropTable != nil {
		drop = d.DropTable(metaTable)
	}
	if err := inTx(ctx, t.DB, drop); err != nil && d.DropTable != nil {
		return fmt.Errorf("drop %s: %w", metaTable, err)
	}
	create := "CREATE TABLE " + metaTable + " (sha256 " + d.Varchar(64) + " NOT NULL, path " + d.Varchar(1000) + " NOT NULL, scale integer NOT NULL)"
	if err := inTx(ctx, t.DB, create); err != nil {
		return fmt.Errorf("create %s: %w", metaTable, err)
	}
	if len(path) > 1000 {
		path = path[len(path)-1000:]
	}
	return inTx(ctx, t.DB, d.Rebind("INSERT INTO "+metaTable+" (sha256, path, scale) VALUES (?, ?, ?)"), sum, path, scale)
}

// readMeta reads the record of the last init script loaded.
func readMeta(ctx context.Context, db *sql.DB) (sum string, scale int, err error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = tx.Rollback() }()
	err = tx.QueryRowContext(ctx, "SELECT sha256, scale FROM "+metaTable).Scan(&sum, &scale)
	if errors.Is(err, sql.ErrNoRows) {
		err = errors.New("its record is empty")
	}
	return sum, scale, err
}

// inTx runs one statement in a transaction of its own (Firebird's DDL must be committed
// before a later statement uses what it made).
func inTx(ctx context.Context, db *sql.DB, query string, args ...any) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
