package firebird

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
)

var (
	_ engine.CacheSizer = Engine{}
	_ engine.Encrypter  = Engine{}
	_ engine.Operator   = Engine{}
)

// RequestedCache implements engine.CacheSizer: DefaultDbCachePages pages of the benchmark
// database's page size (PageSize, 8 KB by default), 2048 pages by default in Super, 256 in
// Classic and SuperClassic, where each connection has a cache of that size (the size of
// one is what is checked: a limit cannot know the connections to come).
func (Engine) RequestedCache(settings map[string]string) (string, int64, error) {
	const name = "DefaultDbCachePages"
	pages := int64(defaultPagesSuper)
	if classic(settings) {
		pages = defaultPagesClassic
	}
	if v, ok := engine.LookupSetting(settings, name); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return name, 0, fmt.Errorf("%s=%s is not a number of pages", name, v)
		}
		if n > 0 {
			pages = n
		}
	}
	size := int64(defaultPageSize)
	if v, ok := engine.LookupSetting(settings, KeyPageSize); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
			size = n
		}
	}
	return name, pages * size, nil
}

// CanEncrypt implements engine.Encrypter: Firebird 3 encrypts a database only through a
// database crypt plugin (ALTER DATABASE ENCRYPT WITH plugin), and Debian's packages
// install none; dblat sets up none either.
func (Engine) CanEncrypt(cfg engine.LaunchConfig) error {
	why := "Debian's Firebird 3 packages install none: firebird3.0-examples holds only the source of a sample plugin (DbCrypt_example) that XORs each page with a constant, which is no encryption"
	bin, err := FindBinaries(launchBinDir(cfg))
	if err == nil {
		var crypt []string
		entries, _ := os.ReadDir(filepath.Join(bin.Root, "plugins"))
		for _, e := range entries {
			if strings.Contains(strings.ToLower(e.Name()), "crypt") {
				crypt = append(crypt, e.Name())
			}
		}
		if len(crypt) > 0 {
			why = fmt.Sprintf("%s holds %s, which dblat does not know how to configure", filepath.Join(bin.Root, "plugins"), strings.Join(crypt, ", "))
		} else {
			why = fmt.Sprintf("%s holds none; %s", filepath.Join(bin.Root, "plugins"), why)
		}
	}
	return fmt.Errorf("Firebird 3 encrypts a database only through a database crypt plugin (ALTER DATABASE ENCRYPT WITH), and %s: compare encryption at rest on MariaDB", why)
}

// Operation implements engine.Operator: a backup is nbackup's level-0 backup through the
// services API (fbsvcmgr action_nbak: the server locks the database, copies its pages to
// the backup file and merges the changes made meanwhile), a vacuum is a sweep (gfix
// -sweep), an index build is CREATE INDEX. Firebird has no checkpoint: it writes a page
// when its transaction commits (forced writes) or leaves it to the OS.
func (Engine) Operation(cfg engine.LaunchConfig, op string) (string, error) {
	switch op {
	case engine.OpBackup:
		return "nbackup -B 0 through the services API (fbsvcmgr action_nbak)", nil
	case engine.OpVacuum:
		return "gfix -sweep", nil
	case engine.OpIndex:
		return "CREATE INDEX", nil
	case engine.OpCheckpoint:
		return "", errors.New("Firebird has no checkpoint to start: it writes a changed page when its transaction commits (forced writes on) or leaves it to the OS (Firebird has backup, vacuum, which is its sweep, and index)")
	}
	return "", fmt.Errorf("Firebird has no operation %q (it has backup, vacuum and index)", op)
}

// duringIndex is the index OpIndex builds and its Undo drops.
const duringIndex = "DBLAT_DURING"

// RunOperation implements engine.Operator.
func (Engine) RunOperation(ctx context.Context, req engine.OperationRequest) (engine.OperationResult, error) {
	switch req.Op {
	case engine.OpBackup:
		return nbackup(ctx, req)
	case engine.OpVacuum:
		took, err := SweepDatabase(ctx, req.Server, req.DSN)
		return engine.OperationResult{Detail: fmt.Sprintf("swept in %.1f s", took.Seconds())}, err
	case engine.OpIndex:
		ddl := func(ctx context.Context, q string) error {
			tx, err := req.DB.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, q); err != nil {
				_ = tx.Rollback()
				return err
			}
			return tx.Commit()
		}
		res := engine.OperationResult{Detail: fmt.Sprintf("index on %s (%s)", req.Table, strings.Join(req.Columns, ", ")),
			Undo: func(ctx context.Context) error {
				var n int
				if err := req.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM RDB$INDICES WHERE RDB$INDEX_NAME = ?", duringIndex).Scan(&n); err != nil || n == 0 {
					return err
				}
				return ddl(ctx, "DROP INDEX "+duringIndex)
			}}
		err := ddl(ctx, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", duringIndex, req.Table, strings.Join(req.Columns, ", ")))
		return res, err
	}
	_, err := Engine{}.Operation(engine.LaunchConfig{}, req.Op)
	return engine.OperationResult{}, err
}

// nbackup runs a level-0 nbackup of req's database through the server's services API
// (fbsvcmgr, logged in as SYSDBA with the password read from the instance's password
// file): the server itself writes the backup into req.Dir, which it is given first.
func nbackup(ctx context.Context, req engine.OperationRequest) (engine.OperationResult, error) {
	inst := req.Server
	db, err := databaseFile(inst, req.DSN)
	if err != nil {
		return engine.OperationResult{}, err
	}
	tool, err := clientTool(inst, "fbsvcmgr")
	if err != nil {
		return engine.OperationResult{}, err
	}
	if inst.RunAs != "" {
		acct, err := managed.Unprivileged(inst.RunAs)
		if err != nil {
			return engine.OperationResult{}, err
		}
		if err := acct.Hand(req.Dir); err != nil {
			return engine.OperationResult{}, err
		}
	}
	file := filepath.Join(req.Dir, filepath.Base(db)+".nbk")
	cmd := command(nil, inst.Dir, tool, fmt.Sprintf("127.0.0.1/%d:service_mgr", inst.Port), "user", sysdba,
		"fetch_password", PasswordFile(inst), "action_nbak", "dbname", db, "nbk_file", file, "nbk_level", "0")
	out, err := runCmd(ctx, cmd)
	if err != nil {
		if ctx.Err() != nil {
			return engine.OperationResult{}, ctx.Err()
		}
		return engine.OperationResult{}, fmt.Errorf("fbsvcmgr action_nbak: %v: %s", err, lastLines(out, 2))
	}
	st, err := os.Stat(file)
	if err != nil {
		return engine.OperationResult{}, fmt.Errorf("nbackup wrote no %s: %s", file, lastLines(out, 2))
	}
	return engine.OperationResult{Detail: engine.FormatBytes(float64(st.Size())) + " backup file"}, nil
}

// cacheIO implements engine.Comparison.IO from the monitoring tables: pages read from the
// database file against pages fetched (MON$IO_STATS, the database's or its attachments'),
// and the transactions started (MON$NEXT_TRANSACTION).
func cacheIO(d map[string]float64) (engine.IO, bool) {
	reads, ok1 := d["mon$io_stats.page_reads"]
	fetches, ok2 := d["mon$io_stats.page_fetches"]
	next, ok3 := d["mon$database.next_transaction"]
	if !ok1 || !ok2 || !ok3 || fetches <= 0 {
		return engine.IO{}, false
	}
	return engine.IO{Reads: reads, Lookups: fetches, Transactions: next}, true
}
