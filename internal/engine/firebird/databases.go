package firebird

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
)

// OptionPageSize is the database option of the page size (seed 002: comparing page sizes is
// one of the factors a Firebird study changes, one at a time).
const OptionPageSize = "page_size"

var databaseOptions = option.Set{
	{Name: OptionPageSize, Kind: option.String, Values: []string{"4096", "8192", "16384"},
		Usage: "Firebird (managed): the page size of the run's database; each size has a database of its own on the server, loaded once (default: the server's own database, with its PageSize setting, 8192 unless set)"},
}

// DatabaseOptions implements engine.Databases.
func (Engine) DatabaseOptions() option.Set { return databaseOptions }

// Database implements engine.Databases: the DSN of inst's benchmark database with the page
// size vals ask for. The server's own database (bench.fdb, created with its PageSize
// setting) serves its page size and runs without a page_size; every other size has a
// database of its own in the server's data directory, bench-p<size>.fdb, created empty
// (UTF8, the server's forced-writes setting) on first use and kept, like bench.fdb, with its
// own load and pristine copy. The server must be running.
func (Engine) Database(ctx context.Context, inst *managed.Instance, vals option.Values) (string, error) {
	ps := vals[OptionPageSize]
	if ps == "" {
		return inst.DSN, nil
	}
	size, err := strconv.Atoi(ps)
	if err != nil || !validPageSize(size) {
		return "", fmt.Errorf("option %s=%s: Firebird 3.0 supports %s", OptionPageSize, ps, joinInts(validPageSizes, ", "))
	}
	cfg, err := checkSettings(inst.Settings)
	if err != nil {
		return "", err
	}
	if size == orDefault(cfg.pageSize, defaultPageSize) {
		return inst.DSN, nil
	}
	name := fmt.Sprintf("bench-p%d.fdb", size)
	path := filepath.Join(inst.Dir, dataDir, name)
	if _, err := os.Stat(path); err == nil {
		return DSN(inst, path), nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return launcherOf(inst).CreateDatabase(ctx, inst, name, size)
}

// launcherOf returns a launcher that finds the binaries inst was started with.
func launcherOf(inst *managed.Instance) Launcher {
	if inst.Binaries == "" || inst.Binaries == filepath.Dir(debianServer) {
		return Launcher{RunAs: inst.RunAs}
	}
	return Launcher{BinDir: inst.Binaries, RunAs: inst.RunAs}
}

// databaseFile returns the database file of inst that dsn names: "" names the benchmark
// database (bench.fdb). The DSN must name a file in inst's data directory.
func databaseFile(inst *managed.Instance, dsn string) (string, error) {
	bench := filepath.Join(inst.Dir, dataDir, benchFile)
	if dsn == "" {
		return bench, nil
	}
	u, err := parseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("firebird DSN %s: %w", Engine{}.Redact(dsn), err)
	}
	path := filepath.Clean(u.Path)
	if filepath.Dir(path) != filepath.Join(inst.Dir, dataDir) {
		return "", fmt.Errorf("firebird DSN %s: %s is not a database of server %s (in %s)", Engine{}.Redact(dsn), path, inst.Name, filepath.Join(inst.Dir, dataDir))
	}
	return path, nil
}
