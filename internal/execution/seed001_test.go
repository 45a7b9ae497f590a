package execution

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/report"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/workload"
)

// runSeed001 parses src as a study file named name and runs it, returning its finished
// runs as stored (with samples and signals) and what it said.
func runSeed001(t *testing.T, c *Core, store results.Store, name, src string) ([]*results.Run, string) {
	t.Helper()
	log := &infoLog{}
	c.Observer = log
	st, err := study.Parse(name+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.RunStudy(ctx, nil, st); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, log.text())
	}
	list, err := store.List(ctx, results.Filter{Study: st.Name})
	if err != nil {
		t.Fatal(err)
	}
	var out []*results.Run
	for _, r := range list {
		full, err := store.Get(ctx, r.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, full)
	}
	return out, log.text()
}

// TestBackupDuringWindow: a backup started in the middle of a TPC-C window, on each engine
// with its own tool, ends while the run goes on; the run finishes with nothing lost (its
// data passes TPC-C's consistency conditions afterwards), the stored run names the
// operation with its times and outcome, what the backup disturbed is named as the
// operation's, the report lists it with the window's figures before, during and after it,
// and the backup's files are gone.
func TestBackupDuringWindow(t *testing.T) {
	for _, eng := range []string{"postgres", "mariadb", "firebird"} {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			switch eng {
			case "postgres":
				pgtest.Server(t)
			case "mariadb":
				mariadbtest.SkipIfMissing(t)
			case "firebird":
				fbtest.Require(t)
			}
			c, store := newCore(t)
			name := "backup-" + eng
			runs, log := runSeed001(t, c, store, name, fmt.Sprintf(`study: %s
server: {engine: %s}
repeat: 1
between_runs: keep
base: {workload: tpcc, warehouses: 1, terminals: 2, duration: 4s, warmup: 500ms, during: backup@1500ms}
`, name, eng))
			if len(runs) != 1 || runs[0].Status != results.StatusFinished || runs[0].Summary.Committed == 0 {
				t.Fatalf("runs %+v\n%s", runs, log)
			}
			r := runs[0]
			if r.Params.During != "backup@1.5s" || len(r.Operations) != 1 {
				t.Fatalf("run asked %q and recorded %+v", r.Params.During, r.Operations)
			}
			op := r.Operations[0]
			if op.Name != "backup" || op.Outcome != results.OperationDone || op.Tool == "" || op.Detail == "" ||
				op.Started < op.At || op.Ended < op.Started {
				t.Errorf("operation %+v\n%s", op, log)
			}
			for _, d := range r.Disturbances {
				// What loaded the machine over the whole window is judged without the
				// backup's time, and may be the other tests' servers; a stretch within the
				// window is the backup's wherever it overlaps it.
				whole := d.From == 0 && d.To == r.Summary.Elapsed
				if d.From < op.Ended && d.To > op.Started && !whole && d.Cause != disturb.CauseOperation {
					t.Errorf("a stretch during the backup named %s: %+v", d.Cause, d)
				}
			}
			inst, err := c.Servers.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(filepath.Join(inst.Dir, duringDir)); len(left) > 0 {
				t.Errorf("the backup's files are left in %s: %v", filepath.Join(inst.Dir, duringDir), left)
			}
			checkTPCC(t, c, name)
			rep, err := report.Build(report.Input{Study: name, Runs: []results.Run{*r}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Operations) != 1 || len(rep.Operations[0].Phases) < 2 {
				t.Errorf("report's operations %+v", rep.Operations)
			}
		})
	}
}

// checkTPCC restarts the study's server name and checks its data against TPC-C's
// consistency conditions (3.3.2).
func checkTPCC(t *testing.T, c *Core, name string) {
	t.Helper()
	ctx := context.Background()
	inst, err := c.Servers.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, ServerStart{Engine: inst.Engine, Name: name}); err != nil {
		t.Fatal(err)
	}
	target, err := c.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := target.Open(ctx, target.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB(wt)
	def, _ := workload.Lookup("tpcc")
	checks, err := def.Check(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if !ch.OK {
			t.Errorf("TPC-C %s after the run: %s", ch.Clause, ch.Name)
		}
	}
}

// TestFailedOperation: a backup the server refuses (no WAL sender allowed) is reported as
// failed with the server's reason, and the run finishes and is stored like any other.
func TestFailedOperation(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	c, store := newCore(t)
	runs, log := runSeed001(t, c, store, "failed-op", `study: failed-op
server: {engine: postgres, settings: {max_wal_senders: 0}}
repeat: 1
between_runs: keep
base: {workload: tpcc, warehouses: 1, terminals: 2, duration: 3s, warmup: 500ms, during: backup@1s}
`)
	if len(runs) != 1 || runs[0].Status != results.StatusFinished || runs[0].Summary.Committed == 0 {
		t.Fatalf("runs %+v\n%s", runs, log)
	}
	op := runs[0].Operations
	if len(op) != 1 || op[0].Outcome != results.OperationFailed || !strings.Contains(op[0].Error, "max_wal_senders") {
		t.Errorf("operation %+v, want the backup failed for max_wal_senders", op)
	}
	if !strings.Contains(log, "backup ended") || !strings.Contains(log, "failed") {
		t.Errorf("the study did not say the backup failed:\n%s", log)
	}
}

// TestMemoryLimit: a study's server with a memory limit runs in a memory cgroup that holds
// it, its processes in it, and every run records the limit read back from the cgroup, the
// requested level, and what the server read from the storage layer; the report puts the
// cache's figures beside each cell. A cache larger than the limit, or a limit on a host that
// cannot hold one, is refused before any server starts, at the study's line.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	c, store := newCore(t)
	if err := managed.CanLimitMemory(); err != nil {
		st, perr := study.Parse("m.yaml", []byte("study: m\nserver: {engine: postgres, memory: 512MB}\n"))
		if perr != nil {
			t.Fatal(perr)
		}
		if _, perr = c.Plan(context.Background(), st); perr == nil || !strings.Contains(perr.Error(), "m.yaml:2:36: "+err.Error()) {
			t.Errorf("plan on a host that cannot limit memory: %v", perr)
		}
		t.Skipf("this host cannot limit a server's memory: %v", err)
	}
	st, err := study.Parse("m.yaml", []byte("study: m\nserver: {engine: postgres, settings: {shared_buffers: 256MB}}\nfactors:\n  server.memory: [1GB, 192MB]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Plan(context.Background(), st); err == nil || !strings.Contains(err.Error(),
		"m.yaml:4:24: memory 192MB is not more than the cache the server takes for itself (shared_buffers = 256 MiB): give it more memory, or a smaller shared_buffers") {
		t.Errorf("plan with a cache above the limit: %v", err)
	}
	if list, _ := c.Servers.List(); len(list) > 0 {
		t.Errorf("the plan started servers: %v", list)
	}
	runs, log := runSeed001(t, c, store, "memory-limit", `study: memory-limit
server: {engine: postgres}
repeat: 1
base: {workload: tpcc, warehouses: 1, terminals: 2, duration: 2s, warmup: 500ms}
factors:
  server.memory: [none, 256MB]
`)
	byLevel := map[string]*results.Run{}
	for _, r := range runs {
		if r.Status != results.StatusFinished {
			t.Fatalf("run %d %s: %s\n%s", r.ID, r.Status, r.Reason, log)
		}
		byLevel[r.Params.Options[results.FactorMemory]] = r
		if _, ok := r.StatsAfter[StatReadBytes]; !ok {
			t.Errorf("run %d stored no %s: %v", r.ID, StatReadBytes, r.StatsAfter)
		}
	}
	limited, free := byLevel["256MB"], byLevel["none"]
	if limited == nil || free == nil || limited.Server.MemoryLimit != 256<<20 || free.Server.MemoryLimit != 0 {
		t.Fatalf("runs by level %v", byLevel)
	}
	if !strings.Contains(log, "runs under a memory limit of 256 MiB") || !strings.Contains(log, "dropped from the page cache") {
		t.Errorf("the study did not say the server ran under its limit:\n%s", log)
	}
	if _, err := c.Servers.Load("memory-limit"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(context.Background(), ServerStart{Engine: "postgres", Name: "memory-limit", Memory: "256MB"}); err != nil {
		t.Fatal(err)
	}
	inst, err := c.Servers.Load("memory-limit")
	if err != nil {
		t.Fatal(err)
	}
	procs, err := os.ReadFile(filepath.Join(inst.MemoryCgroup, "cgroup.procs"))
	if err != nil || !slices.Contains(strings.Fields(string(procs)), strconv.Itoa(inst.PID)) {
		t.Errorf("server %d not in its memory cgroup %q: %q (%v)", inst.PID, inst.MemoryCgroup, procs, err)
	}
	rep, err := report.Build(report.Input{Study: "memory-limit", Runs: []results.Run{*free, *limited}, Factors: []string{results.FactorMemory}})
	if err != nil {
		t.Fatal(err)
	}
	for _, cell := range rep.Cells {
		if cell.Cache == nil || cell.Cache.Runs != 1 || cell.Cache.HitRatio <= 0 || cell.Cache.DiskRuns != 1 {
			t.Errorf("cell %s: cache %+v", cell.Key, cell.Cache)
		}
	}
}

// TestEncryptionStudy: a study of MariaDB encrypted at rest against plain runs the
// encrypted level on a server of its own, whose key file only its account reads and whose
// tablespaces are all encrypted, as each run reads back; engines without encryption at rest
// are refused at plan time, at the line that asks, with the reason, and so is an operation
// an engine does not have.
func TestEncryptionStudy(t *testing.T) {
	t.Parallel()
	c, store := newCore(t)
	for _, tc := range []struct{ src, want string }{
		{"study: e\nserver: {engine: postgres, encryption: on}\n", "e.yaml:2:28: encryption on: PostgreSQL's community server has no encryption at rest"},
		{"study: e\nserver: {engine: firebird}\nfactors:\n  server.encryption: [off, on]\n",
			"e.yaml:4:28: encryption on: Firebird 3 encrypts a database only through a database crypt plugin"},
		{"study: e\nserver: {engine: firebird}\nbase: {during: checkpoint@1s, duration: 5s}\n",
			"e.yaml:3:16: during checkpoint: Firebird has no checkpoint to start"},
		{"study: e\nserver: {engine: mariadb}\nbase: {during: sweep@1s, duration: 5s}\n",
			"e.yaml:3:16: during vacuum: MariaDB has no vacuum or sweep to start"},
	} {
		st, err := study.Parse("e.yaml", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Plan(context.Background(), st); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan of %q: %v, want %q", tc.src, err, tc.want)
		}
	}
	mariadbtest.SkipIfMissing(t)
	runs, log := runSeed001(t, c, store, "encryption", `study: encryption
server: {engine: mariadb}
repeat: 1
between_runs: keep
base: {workload: tpcc, warehouses: 1, terminals: 2, duration: 2s, warmup: 500ms}
factors:
  server.encryption: [off, on]
`)
	if len(runs) != 2 {
		t.Fatalf("%d runs\n%s", len(runs), log)
	}
	for _, r := range runs {
		level := r.Params.Options[results.FactorEncryption]
		enc := r.Server.Settings[mariadb.SettingTablespacesEncrypted]
		switch level {
		case "on":
			n, all, ok := strings.Cut(enc, " of ")
			if r.Server.Target != "encryption-encrypted" || r.Server.Settings["innodb_encrypt_tables"] != "ON" ||
				r.Server.Settings["innodb_encrypt_log"] != "ON" || !ok || n != all || n == "0" {
				t.Errorf("encrypted run on %s: tables %s, log %s, tablespaces encrypted %q", r.Server.Target,
					r.Server.Settings["innodb_encrypt_tables"], r.Server.Settings["innodb_encrypt_log"], enc)
			}
		case "off":
			if r.Server.Target != "encryption" || r.Server.Settings["innodb_encrypt_tables"] != "" && r.Server.Settings["innodb_encrypt_tables"] != "OFF" {
				t.Errorf("plain run on %s: tables %q", r.Server.Target, r.Server.Settings["innodb_encrypt_tables"])
			}
		default:
			t.Errorf("run %d recorded encryption %q", r.ID, level)
		}
	}
	inst, err := c.Servers.Load("encryption-encrypted")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(mariadb.KeyFile(inst))
	if err != nil || st.Mode().Perm() != 0o600 || !inst.Encrypted {
		t.Errorf("key file %v (%v), instance encrypted %v", st, err, inst.Encrypted)
	}
	if _, err := c.Start(context.Background(), ServerStart{Engine: "mariadb", Name: "encryption", Encryption: "on"}); err == nil ||
		!strings.Contains(err.Error(), `server "encryption" was created unencrypted, and its data stays so: give another --name`) {
		t.Errorf("encrypting a plain server: %v", err)
	}
}
