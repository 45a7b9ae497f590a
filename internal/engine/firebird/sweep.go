package firebird

import (
	"context"
	"fmt"
	"time"

	"github.com/dblat/dblat/internal/managed"
)

// Sweep sweeps the benchmark database (bench.fdb) of the running managed server inst: it is
// SweepDatabase(ctx, inst, "").
func Sweep(ctx context.Context, inst *managed.Instance) (time.Duration, error) {
	return SweepDatabase(ctx, inst, "")
}

// SweepDatabase sweeps the database of the running managed server inst that dsn names (""
// for the benchmark database; see Database for the others), as seed 001 does before every
// session, and returns how long it took. It runs `gfix -sweep` as a client of
// the server (127.0.0.1/PORT:path), logged in as SYSDBA with the password from the
// instance's password file: gfix reads it from the file (-fetch_password), so only the
// file's path is on its command line.
//
// The sweep removes the back versions no transaction can still see and moves the oldest
// interesting transaction (OIT, MON$OLDEST_TRANSACTION) up to the oldest transaction active
// when it started (OAT), past transactions that were rolled back or died with their
// connection. What it cannot remove is what a transaction still open may see: sweep with no
// session running. Other connections may stay attached; the server keeps serving them.
//
// The duration is the wall-clock time of the whole gfix run, its start and attachment (SRP
// authentication, wire encryption) included: some 0.1 s even for a small database (60-120
// ms for 3000 rows with 9000 back versions on 3.0.11). A failed sweep returns an error
// quoting gfix's last lines. When ctx ends, gfix is stopped and ctx's error returned.
func SweepDatabase(ctx context.Context, inst *managed.Instance, dsn string) (time.Duration, error) {
	if inst.PID == 0 {
		return 0, fmt.Errorf("server %s is not running", inst.Name)
	}
	db, err := databaseFile(inst, dsn)
	if err != nil {
		return 0, err
	}
	gfix, err := clientTool(inst, "gfix")
	if err != nil {
		return 0, err
	}
	cmd := command(nil, inst.Dir, gfix, "-sweep", "-user", sysdba,
		"-fetch_password", PasswordFile(inst), remotePath(inst, db))
	start := time.Now()
	out, err := runCmd(ctx, cmd)
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("gfix -sweep %s: %v: %s", db, err, lastLines(out, 3))
	}
	return took, nil
}
