package mariadb_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/mariadb/mariadbtest"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/managed/managedtest"
)

func newInstance(t *testing.T, name string, settings map[string]string) *managed.Instance {
	t.Helper()
	mariadbtest.SkipIfMissing(t)
	inst := &managed.Instance{Name: name, Engine: "mariadb", Dir: filepath.Join(mariadbtest.Dir(t), "srv"), Settings: settings}
	if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestManagedServerLifecycle(t *testing.T) {
	ctx := context.Background()
	inst := newInstance(t, "life", map[string]string{
		"innodb_buffer_pool_size": "48M",
		"innodb-log-file-size":    "16M",
		"max_connections":         "77",
		// Clamped by mariadbd to 16384, then sized down to max_connections.
		"thread_cache_size": "99999",
		"skip-log-bin":      "",
	})
	var warnings []string
	l := mariadb.Launcher{Warn: func(msg string) { warnings = append(warnings, msg) }}
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	pid := inst.PID
	t.Cleanup(func() { _ = l.Stop(ctx, inst) })
	for _, user := range []string{"dblat", "root"} {
		pw, ok, err := inst.Password(user)
		if !ok || err != nil {
			t.Fatalf("no password kept for %s: %v", user, err)
		}
		if strings.Contains(inst.DSN, pw) || strings.Contains(inst.Client, pw) {
			t.Errorf("the DSN or the client's command line holds %s's password: %s, %s", user, inst.DSN, inst.Client)
		}
	}
	if !strings.Contains(inst.DSN, "option_file="+mariadb.OptionFile(inst)) || !strings.Contains(inst.Client, "--defaults-extra-file="+mariadb.OptionFile(inst)) {
		t.Errorf("the DSN and the client's command line must name the option file: %s, %s", inst.DSN, inst.Client)
	}
	if st, err := os.Stat(mariadb.OptionFile(inst)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("option file: %v, mode %v", err, st.Mode())
	}
	if inst.RunAs == "" && os.Geteuid() == 0 {
		t.Error("runs as root")
	}

	// Settings read back: the clamped one is visible, the others match.
	back, err := mariadb.LastSettings(inst)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]mariadb.Setting{}
	for _, s := range back {
		got[s.Name] = s
	}
	if s := got["thread_cache_size"]; !s.Changed || s.Effective != "77" {
		t.Errorf("thread_cache_size read back as %+v, want changed to 77", s)
	}
	for _, k := range []string{"innodb_buffer_pool_size", "innodb-log-file-size", "max_connections", "skip-log-bin"} {
		if s := got[k]; s.Changed || s.Variable == "" {
			t.Errorf("%s read back as %+v", k, s)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "thread_cache_size") {
		t.Errorf("warnings %q, want one about thread_cache_size", warnings)
	}

	db := open(t, inst.DSN, engine.OpenOptions{})
	mustExec(t, db, "CREATE TABLE kept (id int PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO kept VALUES (42)")
	// With LOCAL INFILE refused, CopyRows falls back to INSERTs.
	mustExec(t, db, "SET GLOBAL local_infile = OFF")
	n := 0
	loaded, err := mariadb.Engine{}.CopyRows(ctx, db, "kept", []string{"id"}, func(row []any) bool {
		n++
		row[0] = n
		return n <= 3
	})
	if err != nil || loaded != 3 {
		t.Errorf("CopyRows without local_infile: %d rows, %v", loaded, err)
	}
	db.Close()

	// The port is taken now: a second server asked for it gets a one-line error.
	other := newInstance(t, "other", nil)
	other.Port = inst.Port
	if err := l.Start(ctx, other); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("start on a used port: %v", err)
	}
	if err := l.Start(ctx, inst); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second start of a running server: %v", err)
	}

	if err := l.Stop(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if managed.Alive(pid) {
		t.Fatalf("mariadbd %d still running after Stop", pid)
	}
	if inst.PID != 0 {
		t.Errorf("PID %d kept after Stop", inst.PID)
	}
	if _, err := os.Stat(mariadb.SocketPath(inst)); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}

	// A restart keeps the data directory and the port.
	port := inst.Port
	if err := l.Start(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if inst.Port != port {
		t.Errorf("port changed across restart: %d -> %d", port, inst.Port)
	}
	db = open(t, inst.DSN, engine.OpenOptions{})
	var count int
	if err := db.QueryRow("SELECT COUNT(*) FROM kept").Scan(&count); err != nil || count != 4 {
		t.Errorf("after restart: %d rows, %v; want 4", count, err)
	}
	db.Close()
	pid = inst.PID
	if err := l.Stop(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if managed.Alive(pid) {
		t.Fatalf("mariadbd %d still running after Stop", pid)
	}
}

func TestManagedServerRejectsUnknownSetting(t *testing.T) {
	for _, tc := range []struct {
		key, value, want string
	}{
		{"innodb_bufer_pool_size", "1G", `unknown MariaDB setting "innodb_bufer_pool_size" (did you mean innodb_buffer_pool_size?)`},
		{"max-conections", "10", `(did you mean max-connections?)`},
		{"innodb_buffer_pool_size", "lots", "Unknown suffix 'l' used for variable 'innodb-buffer-pool-size'"},
		{"transaction_isolation", "SOMETIMES", "Error while setting value 'SOMETIMES' to 'transaction-isolation'"},
		{"datadir", "/tmp", "managed by dblat"},
		// Accepted by the dry run (adjusted to 2M), refused by InnoDB at initialization.
		{"innodb_buffer_pool_size", "1M", "requires innodb_buffer_pool_size >= 6 MiB"},
	} {
		inst := newInstance(t, "bad", map[string]string{tc.key: tc.value})
		err := mariadb.Launcher{}.Start(context.Background(), inst)
		if err == nil {
			_ = mariadb.Launcher{}.Stop(context.Background(), inst)
			t.Errorf("started with %s=%s", tc.key, tc.value)
			continue
		}
		t.Logf("%s=%s: %v", tc.key, tc.value, err)
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%s: error %q, want one line with %q", tc.key, tc.value, err, tc.want)
		}
		if inst.PID != 0 {
			t.Errorf("PID %d left behind", inst.PID)
		}
		if _, err := os.Stat(filepath.Join(inst.Dir, "data")); !os.IsNotExist(err) {
			t.Errorf("%s=%s: data directory created before the settings were checked", tc.key, tc.value)
		}
	}
}

func TestManagedServerPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	inst := newInstance(t, "busy", nil)
	inst.Port = l.Addr().(*net.TCPAddr).Port
	err = mariadb.Launcher{}.Start(context.Background(), inst)
	if err == nil || !strings.Contains(err.Error(), "in use") {
		_ = mariadb.Launcher{}.Stop(context.Background(), inst)
		t.Fatalf("start on a used port: %v", err)
	}
}

func TestFindBinariesNamesTheFix(t *testing.T) {
	_, err := mariadb.FindBinaries("/nonexistent")
	if err == nil || !strings.Contains(err.Error(), "--bin-dir") {
		t.Errorf("err = %v", err)
	}
}

func TestSameValue(t *testing.T) {
	for _, tc := range []struct {
		req, eff string
		same     bool
	}{
		{"64M", "67108864", true},
		{"1g", "1073741824", true},
		{"2", "2", true},
		{"on", "ON", true},
		{"1", "ON", true},
		{"", "ON", true},
		{"0", "ON", false},
		{"read-committed", "READ-COMMITTED", true},
		{"0.9", "0.900000", true},
		{"NO_ENGINE_SUBSTITUTION,STRICT_TRANS_TABLES", "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", true},
		{"99999", "16384", false},
		{"100M", "134217728", false},
	} {
		if got := mariadb.SameValue(tc.req, tc.eff); got != tc.same {
			t.Errorf("SameValue(%q, %q) = %v", tc.req, tc.eff, got)
		}
	}
	back := mariadb.ReadBack(map[string]string{"skip-log-bin": "", "log_bin": "OFF", "loose-foo": "1",
		"transaction-isolation": "READ-COMMITTED", "skip-innodb-doublewrite": "0"},
		map[string]string{"log_bin": "OFF", "tx_isolation": "READ-COMMITTED", "innodb_doublewrite": "ON"})
	for _, s := range back {
		if s.Changed || (s.Variable == "") != (s.Name == "loose-foo") {
			t.Errorf("read back %+v", s)
		}
	}
}

// TestManagedServerGetsCredentials: an instance without credentials (one made by a dblat
// whose accounts had no password, or whose credentials were removed) gets new passwords at
// its next start; the old ones no longer let anyone in, and no account is left without one.
func TestManagedServerGetsCredentials(t *testing.T) {
	ctx := context.Background()
	inst := newInstance(t, "adopted", maps.Clone(mariadbtest.Settings))
	old := managedtest.Readopt(t, mariadb.Launcher{}, inst)
	db := open(t, inst.DSN, engine.OpenOptions{})
	var open int
	if err := db.QueryRow(`SELECT COUNT(*) FROM mysql.global_priv WHERE IFNULL(JSON_EXTRACT(Priv, '$.account_locked'), 'false') <> 'true'
		AND IFNULL(JSON_VALUE(Priv, '$.authentication_string'), '') = ''`).Scan(&open); err != nil || open != 0 {
		t.Errorf("%d accounts without a password (%v)", open, err)
	}
	stale := fmt.Sprintf("mysql://dblat:%s@127.0.0.1:%d/dblat", old, inst.Port)
	if db, err := (mariadb.Engine{}).Open(ctx, stale, engine.OpenOptions{}); err == nil {
		db.Close()
		t.Error("the password from before still lets a client in")
	} else if !strings.Contains(err.Error(), "Access denied") {
		t.Errorf("the password from before: %v, want access denied", err)
	}
}

// TestOtherAccountNeedsThePassword: another user of the machine gets into a managed server
// neither over TCP nor through its socket without a password, as root, as dblat or as an
// anonymous user, and does as dblat with the option file its owner handed over (issue 46).
// It runs the mariadb client as the account nobody, which needs root.
func TestOtherAccountNeedsThePassword(t *testing.T) {
	srv := mariadbtest.Server(t)
	s := managedtest.Stranger(t, srv)
	managedtest.NeedTools(t, mariadbtest.Required(), "mariadb")
	if out, err := s.Command("cat", mariadb.OptionFile(srv)).CombinedOutput(); err == nil {
		t.Errorf("%s can read the option file:\n%s", s.Name, out)
	}
	given, err := s.Give(mariadb.OptionFile(srv))
	if err != nil {
		t.Fatal(err)
	}
	client := func(args ...string) (string, error) {
		out, err := s.Command("mariadb", append(args, "-N", "-e", "SELECT CURRENT_USER()")...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, via := range [][]string{{"-h", "127.0.0.1", "-P", strconv.Itoa(srv.Port)}, {"--protocol=socket", "--socket=" + mariadb.SocketPath(srv)}} {
		for _, user := range []string{"root", "dblat", ""} {
			args := append([]string{"--no-defaults"}, via...)
			if user != "" {
				args = append(args, "-u", user)
			}
			if out, err := client(args...); err == nil || !strings.Contains(out, "Access denied") {
				t.Errorf("%s as %q without a password (%s): %v: %s (want access denied)", s.Name, user, strings.Join(via, " "), err, out)
			}
		}
	}
	for args, want := range map[string]string{"": "dblat@127.0.0.1", "-h localhost -S " + mariadb.SocketPath(srv): "dblat@localhost"} {
		if out, err := client(append([]string{"--defaults-file=" + given}, strings.Fields(args)...)...); err != nil || out != want {
			t.Errorf("%s with the option file %s: %v: %s, want %s", s.Name, args, err, out, want)
		}
	}
}
