package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/managed/managedtest"
)

// instanceDir returns a directory that the unprivileged server user can reach.
func instanceDir(t *testing.T) string {
	t.Helper()
	pgtest.Server(t) // skips or fails the same way when binaries are missing
	base, err := os.MkdirTemp("", "dblat-server-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return filepath.Join(base, "srv")
}

func TestManagedServerLifecycle(t *testing.T) {
	ctx := context.Background()
	inst := &managed.Instance{Name: "life", Engine: "postgres", Dir: instanceDir(t),
		Settings: map[string]string{"work_mem": "7MB", "fsync": "off"}}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l := postgres.Launcher{}
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	pid := inst.PID
	t.Cleanup(func() { _ = l.Stop(ctx, inst) })
	db, err := postgres.Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := postgres.Engine{}.Inspect(ctx, db)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Settings["work_mem"]; got != "7168 kB" {
		t.Errorf("work_mem read back %q, want 7168 kB", got)
	}
	pw, ok, err := inst.Password("dblat")
	if err != nil || !ok {
		t.Fatalf("no password kept for dblat: %v", err)
	}
	if strings.Contains(inst.DSN, pw) || strings.Contains(inst.Client, pw) || !strings.Contains(inst.DSN, "passfile="+postgres.PassFile(inst)) {
		t.Errorf("the DSN must name the pgpass file, not hold the password: %s", inst.DSN)
	}
	if st, err := os.Stat(postgres.PassFile(inst)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("pgpass file: %v, mode %v", err, st.Mode())
	}
	hba, err := os.ReadFile(filepath.Join(inst.Dir, "data", "pg_hba.conf"))
	if err != nil || strings.Contains(string(hba), "trust") {
		t.Errorf("pg_hba.conf trusts a connection (%v):\n%s", err, hba)
	}
	// The port is now taken: a second server asked for it gets a one-line error.
	other := &managed.Instance{Name: "other", Engine: "postgres", Dir: instanceDir(t), Port: inst.Port}
	if err := l.Start(ctx, other); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("start on a used port: %v", err)
	}
	if err := l.Stop(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if managed.Alive(pid) {
		t.Fatalf("postgres %d still running after Stop", pid)
	}
	// A restart keeps the data directory and the port.
	port := inst.Port
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if inst.Port != port {
		t.Errorf("port changed across restart: %d -> %d", port, inst.Port)
	}
}

// TestManagedServerGetsCredentials: an instance without credentials (one made by a dblat
// that trusted loopback connections, or whose credentials were removed) gets a new password
// at its next start, and the old one no longer lets anyone in.
func TestManagedServerGetsCredentials(t *testing.T) {
	ctx := context.Background()
	inst := &managed.Instance{Name: "adopted", Engine: "postgres", Dir: instanceDir(t), Settings: map[string]string{"fsync": "off"}}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := managedtest.Readopt(t, postgres.Launcher{}, inst)
	db, err := postgres.Engine{}.Open(ctx, inst.DSN, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	stale := fmt.Sprintf("postgres://dblat:%s@127.0.0.1:%d/dblat?sslmode=disable", old, inst.Port)
	if db, err := (postgres.Engine{}).Open(ctx, stale, engine.OpenOptions{}); err == nil {
		db.Close()
		t.Error("the password from before still lets a client in")
	} else if !strings.Contains(err.Error(), "28P01") {
		t.Errorf("the password from before: %v, want a refusal of the password (28P01)", err)
	}
}

// TestOpenNamesAnUnreadablePassfile: a DSN whose passfile cannot be read fails with that,
// not with the server's refusal of a missing password.
func TestOpenNamesAnUnreadablePassfile(t *testing.T) {
	for _, dsn := range []string{"postgres://dblat@127.0.0.1:1/x?passfile=/nonexistent/pgpass", "host=127.0.0.1 port=1 user=dblat passfile=/nonexistent/pgpass"} {
		_, err := postgres.Engine{}.Open(context.Background(), dsn, engine.OpenOptions{})
		if err == nil || !strings.Contains(err.Error(), "cannot read its passfile") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}

func TestManagedServerRejectsUnknownSetting(t *testing.T) {
	inst := &managed.Instance{Name: "bad", Engine: "postgres", Dir: instanceDir(t),
		Settings: map[string]string{"shared_bufers": "1GB"}}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := postgres.Launcher{}.Start(context.Background(), inst)
	if err == nil {
		_ = postgres.Launcher{}.Stop(context.Background(), inst)
		t.Fatal("started with a misspelt setting")
	}
	if !strings.Contains(err.Error(), `"shared_bufers"`) || !strings.Contains(err.Error(), "did you mean shared_buffers") {
		t.Errorf("error should name the setting and the fix: %q", err)
	}
	if inst.PID != 0 {
		t.Errorf("PID %d left behind", inst.PID)
	}
}

func TestManagedServerReportsBadValueFromLog(t *testing.T) {
	inst := &managed.Instance{Name: "badval", Engine: "postgres", Dir: instanceDir(t),
		Settings: map[string]string{"shared_buffers": "lots"}}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := postgres.Launcher{}.Start(context.Background(), inst)
	if err == nil {
		_ = postgres.Launcher{}.Stop(context.Background(), inst)
		t.Fatal("started with shared_buffers=lots")
	}
	if !strings.Contains(err.Error(), `invalid value for parameter "shared_buffers"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error should quote the server's complaint on one line: %q", err)
	}
}

func TestFindBinariesNamesTheFix(t *testing.T) {
	_, err := postgres.FindBinaries("/nonexistent")
	if err == nil || !strings.Contains(err.Error(), "--bin-dir") {
		t.Errorf("err = %v", err)
	}
}

func TestFreePortIsFree(t *testing.T) {
	p, err := managed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("free port %d not free: %v", p, err)
	}
	l.Close()
}

// TestStopLeavesAReusedPIDAlone: after a crash or a reboot the saved PID may belong to
// another program; Stop must not signal it (dblat often runs as root).
func TestStopLeavesAReusedPIDAlone(t *testing.T) {
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	inst := &managed.Instance{Name: "gone", Dir: t.TempDir(), PID: other.Process.Pid}
	err := postgres.Launcher{}.Stop(context.Background(), inst)
	if err == nil || !strings.Contains(err.Error(), "not signalled") {
		t.Errorf("Stop of a reused PID: %v", err)
	}
	if !managed.Alive(other.Process.Pid) {
		t.Error("Stop signalled a process that is not the server")
	}
	if inst.PID != 0 {
		t.Errorf("the instance still claims PID %d", inst.PID)
	}
}

// TestOtherAccountNeedsThePassword: another user of the machine gets into a managed server
// neither over TCP nor through its socket without the superuser's password, and does with
// the pgpass file its owner handed over (issue 46). It runs psql as the account nobody,
// which needs root.
func TestOtherAccountNeedsThePassword(t *testing.T) {
	inst := pgtest.Server(t)
	s := managedtest.Stranger(t, inst)
	managedtest.NeedTools(t, pgtest.Required(), "psql")
	if out, err := s.Command("cat", postgres.PassFile(inst)).CombinedOutput(); err == nil {
		t.Errorf("%s can read the pgpass file:\n%s", s.Name, out)
	}
	given, err := s.Give(postgres.PassFile(inst))
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", filepath.Join(inst.Dir, "run")} {
		psql := func(env ...string) (string, error) {
			cmd := s.Command("psql", "-X", "-w", "-At", "-h", host, "-p", strconv.Itoa(inst.Port), "-U", "dblat", "-d", "dblat",
				"-c", "SELECT current_user")
			cmd.Env = append(cmd.Env, env...)
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		if out, err := psql(); err == nil || !strings.Contains(out, "password") {
			t.Errorf("%s without the password through %s: %v: %s (want a refusal for want of a password)", s.Name, host, err, out)
		}
		if out, err := psql("PGPASSFILE=" + given); err != nil || out != "dblat" {
			t.Errorf("%s with the pgpass file through %s: %v: %s", s.Name, host, err, out)
		}
	}
}
