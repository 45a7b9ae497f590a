package simple

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/workload"
)

// LoadConfig says what Load stores and how.
type LoadConfig struct {
	// Workload is the workload whose data to load: "tpcb" or "select-only" (the same pgbench
	// tables), "blob", or "ping" (nothing to load).
	Workload string
	// Scale is pgbench's scale factor for tpcb and select-only: Scale branches, 10 × Scale
	// tellers and 100,000 × Scale accounts; 1 to 20,000.
	Scale int
	// BlobSize is the size in bytes of each blob (blob workload); at least 1, at most
	// MaxBlobSize.
	BlobSize int
	// BlobRows is how many blob rows to store (blob workload); at least 1.
	BlobRows int
	// Seed makes the blob bytes reproducible: equal seeds give equal data whatever Workers
	// is. The pgbench tables hold no random data (pgbench's do not either).
	Seed int64
	// Workers is how many connections load in parallel; 0 means 2 × GOMAXPROCS.
	Workers int
	// Progress, when set, is called with the rows stored so far and the total to store. It
	// is called from the loader's goroutines but never concurrently, at least once per
	// 16 Ki rows or chunk of rows, and once at the end with done == total; it must return
	// quickly.
	Progress func(done, total int64)
}

// MaxBlobSize is the largest BlobSize Load accepts: 64 MiB. MariaDB must also be running
// with max_allowed_packet above the blob size (its default is 16 MiB).
const MaxBlobSize = 64 << 20

// LoadInfo describes a completed load, as Loaded reads it back.
type LoadInfo struct {
	// Scale is the pgbench scale of the tpcb/select-only data (0 for blob and ping).
	Scale int
	// BlobSize and BlobRows describe the blob data (0 for the others).
	BlobSize, BlobRows int
	// Seed is the seed the data was loaded with.
	Seed int64
}

// dataset returns the data set a workload runs on: "pgbench", "blob", or "" for ping.
func dataset(name string) (string, error) {
	switch name {
	case "tpcb", "select-only":
		return dsPgbench, nil
	case "blob":
		return dsBlob, nil
	case "ping":
		return "", nil
	}
	return "", fmt.Errorf("unknown simple workload %q (known: %s)", name, strings.Join(Names, ", "))
}

// Names lists the workloads of this package.
var Names = []string{"tpcb", "select-only", "blob", "ping"}

// Load stores the data of cfg.Workload in t: for tpcb and select-only the four pgbench
// tables (dropped first if present, created, filled as `pgbench -i -s Scale` fills them,
// keyed, and their optimizer statistics refreshed); for blob the table simple_blob with
// BlobRows rows of BlobSize random bytes; for ping nothing. The load is recorded last in
// simple_meta, one row per data set, so an interrupted load is reported by Loaded as not
// loaded. Loading one data set leaves the other alone. It blocks until done and uses at
// most Workers connections of t.DB at a time.
//
// The pgbench rows go through the engine's engine.BulkLoader when it has one (COPY on
// PostgreSQL), else through multi-row INSERTs. Blob rows always go through prepared
// INSERTs, because the bulk loaders' text formats do not carry binary values alike on
// every engine. Every statement runs in an explicit transaction (Firebird's autocommit is
// unsafe, see doc.go).
func Load(ctx context.Context, t workload.Target, cfg LoadConfig) error {
	ds, err := dataset(cfg.Workload)
	if err != nil {
		return fmt.Errorf("simple load: %w", err)
	}
	switch ds {
	case "":
		return nil // ping reads no table
	case dsPgbench:
		if cfg.Scale < 1 || cfg.Scale > maxScale {
			return fmt.Errorf("simple load: scale must be 1 to %d, got %d", maxScale, cfg.Scale)
		}
		cfg.BlobSize, cfg.BlobRows = 0, 0
	case dsBlob:
		if cfg.BlobSize < 1 || cfg.BlobSize > MaxBlobSize {
			return fmt.Errorf("simple load: blob size must be 1 to %d bytes, got %d", MaxBlobSize, cfg.BlobSize)
		}
		if cfg.BlobRows < 1 {
			return fmt.Errorf("simple load: blob rows must be at least 1, got %d", cfg.BlobRows)
		}
		cfg.Scale = 0
	}
	if t.Engine == nil || t.DB == nil {
		return errors.New("simple load: no engine or database")
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	d := t.Engine.Dialect()
	if ds == dsBlob && d.Blob == "" {
		return fmt.Errorf("simple load: engine %s has no blob column type (Dialect.Blob)", t.Engine.Name())
	}
	db := t.DB

	if err := ensureMeta(ctx, db, d); err != nil {
		return err
	}
	if err := execTx(ctx, db, d.Rebind("DELETE FROM simple_meta WHERE dataset = ?"), ds); err != nil {
		return fmt.Errorf("simple load: forget the previous load: %w", err)
	}
	tables := datasetTables[ds]
	for _, tb := range tables {
		if err := dropTable(ctx, db, d, tb.name); err != nil {
			return err
		}
	}
	for _, tb := range tables {
		if err := execTx(ctx, db, tb.createSQL(d)); err != nil {
			return fmt.Errorf("simple load: create %s: %w", tb.name, err)
		}
	}

	prog := workload.NewLoadProgress(cfg.Progress)
	var jobs []func(context.Context) error
	if ds == dsPgbench {
		jobs = pgbenchJobs(t, d, cfg.Scale, prog)
	} else {
		jobs = blobJobs(db, d, cfg, prog)
	}
	if err := runJobs(ctx, workers, jobs); err != nil {
		return err
	}
	jobs = jobs[:0]
	for _, tb := range tables {
		jobs = append(jobs, func(ctx context.Context) error { return finishTable(ctx, db, d, tb) })
	}
	if err := runJobs(ctx, workers, jobs); err != nil {
		return err
	}
	prog.Report(0)

	err = execTx(ctx, db, d.Rebind("INSERT INTO simple_meta (dataset, scale, blob_size, blob_rows, seed, loader_version, loaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)"),
		ds, cfg.Scale, cfg.BlobSize, cfg.BlobRows, cfg.Seed, loaderVersion, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		return fmt.Errorf("simple load: record load: %w", err)
	}
	return nil
}

// accountsPerChunk is how many pgbench_accounts rows one loader job stores (one COPY on
// PostgreSQL): a scale-1 load splits in two, so two workers share it.
const accountsPerChunk = 50000

// pgbenchJobs generates the pgbench tables as pgbench's client-side generation does (PG 15
// initGenerateDataClientSide): branches (bid, bbalance 0, filler NULL), tellers (tid, bid =
// (tid-1)/10+1, tbalance 0, filler NULL), accounts (aid, bid = (aid-1)/100,000+1, abalance 0,
// filler the empty string, which CHAR(84) pads). pgbench_history starts empty.
func pgbenchJobs(t workload.Target, d engine.Dialect, scale int, prog *workload.LoadProgress) []func(context.Context) error {
	bulk := engine.Caps(t.Engine).BulkLoader
	load := func(tb *table, lo, hi int64, fill func(i int64, row []any)) func(context.Context) error {
		prog.AddTotal(hi - lo + 1)
		return func(ctx context.Context) error {
			i := lo
			src := prog.Counting(func(row []any) bool {
				if i > hi {
					return false
				}
				fill(i, row)
				i++
				return true
			})
			var err error
			if bulk != nil {
				_, err = bulk.CopyRows(ctx, t.DB, tb.name, tb.colNames(), src.Next)
			} else {
				_, err = workload.InsertRows(ctx, t.DB, d, tb.name, tb.colNames(), src.Next, d.MaxInsertRows)
			}
			src.Flush()
			if err != nil {
				return fmt.Errorf("simple load: %s rows %d..%d: %w", tb.name, lo, hi, err)
			}
			return nil
		}
	}
	n := int64(scale)
	var jobs []func(context.Context) error
	// Accounts first: the largest jobs first, so the workers end together.
	for lo := int64(1); lo <= n*accountsPerScale; lo += accountsPerChunk {
		hi := min(lo+accountsPerChunk-1, n*accountsPerScale)
		jobs = append(jobs, load(tAccounts, lo, hi, func(aid int64, row []any) {
			row[0], row[1], row[2], row[3] = aid, (aid-1)/accountsPerScale+1, int64(0), ""
		}))
	}
	jobs = append(jobs,
		load(tTellers, 1, n*tellersPerScale, func(tid int64, row []any) {
			row[0], row[1], row[2], row[3] = tid, (tid-1)/tellersPerScale+1, int64(0), nil
		}),
		load(tBranches, 1, n*branchesPerScale, func(bid int64, row []any) {
			row[0], row[1], row[2] = bid, int64(0), nil
		}))
	return jobs
}

// blobBytesPerChunk bounds the bytes one blob loader job stores in one transaction.
const blobBytesPerChunk = 16 << 20

// blobJobs stores rows 1..BlobRows of simple_blob, each chunk of rows from its own random
// stream, so the bytes depend only on the seed, the id range and BlobSize.
func blobJobs(db *sql.DB, d engine.Dialect, cfg LoadConfig, prog *workload.LoadProgress) []func(context.Context) error {
	perChunk := int64(max(1, blobBytesPerChunk/cfg.BlobSize))
	// Several rows per INSERT where the dialect allows it, up to 4 MiB per statement (below
	// MariaDB's default max_allowed_packet of 16 MiB).
	perStmt := max(1, min(d.MaxInsertRows, (4<<20)/cfg.BlobSize))
	size := cfg.BlobSize
	var jobs []func(context.Context) error
	for lo := int64(1); lo <= int64(cfg.BlobRows); lo += perChunk {
		hi := min(lo+perChunk-1, int64(cfg.BlobRows))
		prog.AddTotal(hi - lo + 1)
		jobs = append(jobs, func(ctx context.Context) error {
			r := blobRand(cfg.Seed, lo)
			i := lo
			src := prog.Counting(func(row []any) bool {
				if i > hi {
					return false
				}
				// A fresh slice per row: multi-row INSERTs hold several rows' values.
				b := make([]byte, size)
				_, _ = r.Read(b) // ChaCha8.Read never fails
				row[0], row[1] = i, b
				i++
				return true
			})
			_, err := workload.InsertRows(ctx, db, d, tBlobs.name, tBlobs.colNames(), src.Next, perStmt)
			src.Flush()
			if err != nil {
				return fmt.Errorf("simple load: %s rows %d..%d: %w", tBlobs.name, lo, hi, err)
			}
			return nil
		})
	}
	return jobs
}

// blobRand is the random stream of the blob chunk starting at row lo.
func blobRand(seed int64, lo int64) *rand.ChaCha8 {
	var key [32]byte
	for i := range 4 {
		h := fnv.New64a()
		fmt.Fprintf(h, "simple/blob/%d/%d/%d", seed, lo, i)
		binary.LittleEndian.PutUint64(key[8*i:], h.Sum64())
	}
	return rand.NewChaCha8(key)
}

// finishTable adds t's primary key, then refreshes its statistics where the dialect says how.
func finishTable(ctx context.Context, db *sql.DB, d engine.Dialect, t *table) error {
	if q := t.keySQL(); q != "" {
		if err := execTx(ctx, db, q); err != nil {
			return fmt.Errorf("simple load: %s: %w", q, err)
		}
	}
	if d.Analyze != nil && len(t.statsCols) > 0 {
		if _, err := db.ExecContext(ctx, d.Analyze(t.name, t.statsCols)); err != nil {
			return fmt.Errorf("simple load: analyze %s: %w", t.name, err)
		}
	}
	return nil
}

// execTx runs one statement in a transaction of its own.
func execTx(ctx context.Context, db *sql.DB, q string, args ...any) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// dropTable drops a table if it exists.
func dropTable(ctx context.Context, db *sql.DB, d engine.Dialect, name string) error {
	if d.DropTable != nil {
		if err := execTx(ctx, db, d.DropTable(name)); err != nil {
			return fmt.Errorf("simple load: drop %s: %w", name, err)
		}
		return nil
	}
	_ = execTx(ctx, db, "DROP TABLE "+name) // fails when absent: fine
	return ctx.Err()
}

// ensureMeta creates simple_meta unless it can be read.
func ensureMeta(ctx context.Context, db *sql.DB, d engine.Dialect) error {
	var n int64
	if err := readTx(ctx, db, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM simple_meta").Scan(&n)
	}); err == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := execTx(ctx, db, tMeta.createSQL(d)); err != nil {
		return fmt.Errorf("simple load: create simple_meta: %w", err)
	}
	return nil
}

// readTx runs body in a read-only transaction and commits it.
func readTx(ctx context.Context, db *sql.DB, body func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	if err := body(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// runJobs runs jobs on at most workers goroutines, in order of the slice, and returns the
// first error, after canceling the context of the jobs still running.
func runJobs(ctx context.Context, workers int, jobs []func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		next     int
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			for {
				mu.Lock()
				if next == len(jobs) || firstErr != nil {
					mu.Unlock()
					return
				}
				job := jobs[next]
				next++
				mu.Unlock()
				if err := job(ctx); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// Loaded returns what the last completed Load of workload name's data stored in db. It wraps
// workload.ErrNotLoaded when there is no completed load, or when the pgbench tables no longer
// match it (`pgbench -i` ran since, with another scale). ping needs no data: Loaded returns
// the zero LoadInfo for it.
func Loaded(ctx context.Context, db *sql.DB, name string) (LoadInfo, error) {
	ds, err := dataset(name)
	if err != nil || ds == "" {
		return LoadInfo{}, err
	}
	var info LoadInfo
	var branches int64
	err = readTx(ctx, db, func(tx *sql.Tx) error {
		// The dialect is not at hand here: a literal keeps the query free of placeholders.
		err := tx.QueryRowContext(ctx, "SELECT scale, blob_size, blob_rows, seed FROM simple_meta WHERE dataset = '"+ds+"'").
			Scan(&info.Scale, &info.BlobSize, &info.BlobRows, &info.Seed)
		if err != nil || ds != dsPgbench {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pgbench_branches").Scan(&branches)
	})
	switch {
	case err == nil:
	case errors.Is(err, sql.ErrNoRows):
		return LoadInfo{}, fmt.Errorf("no completed load of the %s data (simple_meta has no %q row): %w", ds, ds, workload.ErrNotLoaded)
	case ctx.Err() != nil:
		return LoadInfo{}, ctx.Err()
	default:
		if perr := db.PingContext(ctx); perr != nil {
			return LoadInfo{}, err
		}
		return LoadInfo{}, fmt.Errorf("no %s data (%v): %w", ds, workload.FirstLine(err), workload.ErrNotLoaded)
	}
	if ds == dsPgbench && branches != int64(info.Scale)*branchesPerScale {
		return LoadInfo{}, fmt.Errorf("pgbench_branches holds %d rows but dblat loaded scale %d (did `pgbench -i` run since?): %w",
			branches, info.Scale, workload.ErrNotLoaded)
	}
	return info, nil
}
