package firebird_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/managed"
)

// TestSweepRemovesGarbage makes garbage in the benchmark database of a server of its own
// (Super, and Classic for the forking listener): committed updates of every row while an
// old snapshot transaction stays open, so that the back versions must stay, and a
// transaction that dies with its connection (killed through MON$ATTACHMENTS), which stops
// the OIT. RecordStats must show the versions; once the old snapshot ends, Sweep must
// remove them all and move the OIT past the dead transaction, up to the OAT.
func TestSweepRemovesGarbage(t *testing.T) {
	for _, arch := range []string{"Super", "Classic"} {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			testSweep(t, arch)
		})
	}
}

func testSweep(t *testing.T, arch string) {
	const rows, rounds = 3000, 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst := &managed.Instance{Name: "sweep-" + strings.ToLower(arch), Engine: "firebird",
		Dir: filepath.Join(fbtest.Dir(t), "sweep"), Settings: fbtest.Settings(arch)}
	l := firebird.Launcher{ParentDeathSignal: syscall.SIGKILL}
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Stop(context.Background(), inst) })
	db, err := firebird.Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	mustExec(t, db, "CREATE TABLE GARBAGE (ID INT NOT NULL PRIMARY KEY, V VARCHAR(100))")
	mustExec(t, db, fmt.Sprintf(`EXECUTE BLOCK AS DECLARE i INT = 0; BEGIN
		WHILE (i < %d) DO BEGIN INSERT INTO GARBAGE VALUES (:i, 'initial ' || :i); i = i + 1; END END`, rows))
	st := recordStats(t, ctx, inst)
	if st["gstat.GARBAGE.records"] != rows || st["gstat.GARBAGE.versions"] != 0 || st["gstat.GARBAGE.data_pages"] < 1 {
		t.Fatalf("freshly loaded: %v", st)
	}

	// The old snapshot: it must keep seeing the rows as loaded.
	old, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback()
	var oldID int64
	if err := old.QueryRowContext(ctx, "SELECT CURRENT_TRANSACTION FROM RDB$DATABASE").Scan(&oldID); err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		mustExec(t, db, fmt.Sprintf("UPDATE GARBAGE SET V = 'round %d, ' || ID", r))
	}
	deadID := killedTransaction(t, ctx, inst, db)

	before := recordStats(t, ctx, inst)
	if v := before["gstat.GARBAGE.versions"]; v < rows {
		t.Errorf("with an old snapshot open after %d rounds of updates: %v back versions of GARBAGE, want at least %d", rounds, v, rows)
	}
	if before["gstat.GARBAGE.max_versions"] < rounds {
		t.Errorf("max_versions %v, want at least %d", before["gstat.GARBAGE.max_versions"], rounds)
	}
	if before["gstat.total.versions"] < before["gstat.GARBAGE.versions"] {
		t.Errorf("total.versions %v < GARBAGE.versions %v", before["gstat.total.versions"], before["gstat.GARBAGE.versions"])
	}
	stBefore := monStats(t, ctx, db)
	if stBefore["mon$database.oldest_transaction"] > float64(deadID) {
		t.Errorf("OIT %v past the dead transaction %d before the sweep", stBefore["mon$database.oldest_transaction"], deadID)
	}
	if err := old.Commit(); err != nil {
		t.Fatal(err)
	}
	// Without the old snapshot the OAT moves on, but the dead transaction still stops the OIT
	// (only a sweep moves it past): that is what the sweep is for.
	mustExec(t, db, "UPDATE GARBAGE SET V = V WHERE ID = 0")
	stClosed := monStats(t, ctx, db)
	if oit, oat := stClosed["mon$database.oldest_transaction"], stClosed["mon$database.oldest_active"]; oit > float64(deadID) || oat <= float64(deadID) {
		t.Errorf("old snapshot closed, before the sweep: OIT %v, OAT %v; want OIT stopped by the dead transaction %d, OAT past it", oit, oat, deadID)
	}
	closed := recordStats(t, ctx, inst)

	took, err := firebird.Sweep(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	after := recordStats(t, ctx, inst)
	stAfter := monStats(t, ctx, db)
	markers := func(st engine.Stats) string {
		return fmt.Sprintf("%v/%v/%v", st["mon$database.oldest_transaction"], st["mon$database.oldest_active"], st["mon$database.next_transaction"])
	}
	t.Logf("%s: GARBAGE %v records; versions %v (max %v, %v data pages, fill %v%%) with the old snapshot open, %v once it ended, %v after the sweep (%v data pages, fill %v%%); sweep %v; OIT/OAT/Next %s with the snapshot open, %s once it ended, %s after the sweep (old snapshot %d, dead %d)",
		arch, after["gstat.GARBAGE.records"], before["gstat.GARBAGE.versions"], before["gstat.GARBAGE.max_versions"],
		before["gstat.GARBAGE.data_pages"], before["gstat.GARBAGE.fill_pct"], closed["gstat.GARBAGE.versions"],
		after["gstat.GARBAGE.versions"], after["gstat.GARBAGE.data_pages"], after["gstat.GARBAGE.fill_pct"],
		took.Round(time.Millisecond), markers(stBefore), markers(stClosed), markers(stAfter), oldID, deadID)
	if after["gstat.total.versions"] != 0 || after["gstat.GARBAGE.versions"] != 0 || after["gstat.GARBAGE.max_versions"] != 0 {
		t.Errorf("back versions left after the sweep: %v", after)
	}
	if after["gstat.GARBAGE.records"] != rows {
		t.Errorf("%v records after the sweep, want %d", after["gstat.GARBAGE.records"], rows)
	}
	if took <= 0 || took > time.Minute {
		t.Errorf("sweep took %v", took)
	}
	oit, oat := stAfter["mon$database.oldest_transaction"], stAfter["mon$database.oldest_active"]
	if oit <= float64(deadID) || oit <= float64(oldID) {
		t.Errorf("OIT %v after the sweep, want past the dead transaction %d and the old snapshot %d", oit, deadID, oldID)
	}
	if oat-oit > 3 {
		t.Errorf("OIT %v after the sweep, want close to the OAT %v", oit, oat)
	}
}

// killedTransaction updates rows in a transaction of a connection of its own, kills that
// connection through MON$ATTACHMENTS (the server rolls the transaction back and marks it
// dead), and returns the transaction's number.
func killedTransaction(t *testing.T, ctx context.Context, inst *managed.Instance, db *sql.DB) int64 {
	t.Helper()
	victim, err := firebird.Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	tx, err := victim.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() // fails: the connection is gone
	if _, err := tx.ExecContext(ctx, "UPDATE GARBAGE SET V = 'doomed' WHERE ID < 100"); err != nil {
		t.Fatal(err)
	}
	var att, id int64
	if err := tx.QueryRowContext(ctx, "SELECT CURRENT_CONNECTION, CURRENT_TRANSACTION FROM RDB$DATABASE").Scan(&att, &id); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, fmt.Sprintf("DELETE FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = %d", att))
	return id
}

func recordStats(t *testing.T, ctx context.Context, inst *managed.Instance) map[string]float64 {
	t.Helper()
	st, err := firebird.RecordStats(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func monStats(t *testing.T, ctx context.Context, db *sql.DB) engine.Stats {
	t.Helper()
	st, err := firebird.Engine{}.Stats(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRecordStatsKeepsPasswordOut checks that the tools get the password from the password
// file, never on their command line, and that RecordStats and Sweep fail cleanly, without
// the password in the error, when it is wrong.
func TestRecordStatsKeepsPasswordOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := fbtest.Server(t, "Super")
	// A copy of the shared server's instance pointing at a directory with a wrong password:
	// the tools read configuration and password from inst.Dir.
	dir := fbtest.Dir(t)
	for _, f := range []string{"firebird.conf", "plugins.conf", "databases.conf"} {
		b, err := os.ReadFile(filepath.Join(srv.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"plugins", "intl", "firebird.msg"} {
		if target, err := os.Readlink(filepath.Join(srv.Dir, f)); err == nil {
			if err := os.Symlink(target, filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	const wrong = "0123456789abcdef0123456789abcdef"
	if err := os.MkdirAll(filepath.Join(dir, "lock"), 0o755); err != nil {
		t.Fatal(err)
	}
	inst := *srv
	inst.Dir = dir
	if err := inst.SavePassword("SYSDBA", wrong); err != nil {
		t.Fatal(err)
	}
	if _, err := firebird.RecordStats(ctx, &inst); err == nil || strings.Contains(err.Error(), wrong) {
		t.Errorf("RecordStats with a wrong password: %v", err)
	} else {
		t.Logf("RecordStats with a wrong password: %v", err)
	}
	if _, err := firebird.Sweep(ctx, &inst); err == nil || strings.Contains(err.Error(), wrong) {
		t.Errorf("Sweep with a wrong password: %v", err)
	}
	stopped := *srv
	stopped.PID = 0
	if _, err := firebird.RecordStats(ctx, &stopped); err == nil {
		t.Error("RecordStats of a stopped server succeeded")
	}
}
