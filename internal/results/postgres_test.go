package results_test

// Tests of what only the PostgreSQL backend has: DSNs, roles, a server that may be
// unreachable, its own schema bookkeeping and native column types. Behaviour shared with
// SQLite is in the conformance suite (storetest), run by conformance_test.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
)

// adminExec runs statements on the database of dsn as the superuser dblat.
func adminExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// withUser returns dsn with user and password replaced, and extra query parameters added.
func withUser(t *testing.T, dsn, user, password string, query ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	if user != "dblat" { // a role of its own logs in with its own password, not the superuser's file
		q := u.Query()
		q.Del("passfile")
		u.RawQuery = q.Encode()
	}
	for i := 0; i+1 < len(query); i += 2 {
		q := u.Query()
		q.Set(query[i], query[i+1])
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// newRole creates a login role with a password for this test and drops it afterwards.
func newRole(t *testing.T, dsn, password string) string {
	t.Helper()
	name := fmt.Sprintf("r%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	adminExec(t, dsn, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", name, password))
	t.Cleanup(func() {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.Exec("DROP OWNED BY " + name)
		_, _ = db.Exec("DROP ROLE IF EXISTS " + name)
	})
	return name
}

func TestPostgresLocationHidesPassword(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	const secret = "s3cret-Pw"
	role := newRole(t, dsn, secret)
	adminExec(t, dsn, "GRANT CREATE ON SCHEMA public TO "+role)
	u, _ := url.Parse(dsn)
	port := u.Port()
	db := strings.TrimPrefix(u.Path, "/")

	cases := []struct {
		name, loc, want string
	}{
		{"URL user info", withUser(t, dsn, role, secret),
			fmt.Sprintf("postgres://%s@127.0.0.1:%s/%s?sslmode=disable", role, port, db)},
		{"URL query", withUser(t, dsn, role, "", "password", secret),
			fmt.Sprintf("postgres://%s@127.0.0.1:%s/%s?sslmode=disable", role, port, db)},
		{"key=value", fmt.Sprintf("host=127.0.0.1 port=%s dbname=%s user=%s password='%s' sslmode=disable", port, db, role, secret),
			fmt.Sprintf("host=127.0.0.1 port=%s dbname=%s user=%s", port, db, role)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := results.Open(ctx, tc.loc)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if got := s.Location(); strings.Contains(got, secret) || got != tc.want {
				t.Errorf("Location %q, want %q", got, tc.want)
			}
			// The password is really needed: the role authenticates with it.
			r := storetest.FullRun(t, "", "", time.Now())
			storetest.Write(t, s, &r, results.StatusFinished, nil)
			if _, err := s.Study(ctx, "nope"); err == nil || strings.Contains(err.Error(), secret) {
				t.Errorf("Study error %v shows the password", err)
			}
		})
	}
	wrong := withUser(t, dsn, role, "wrong-"+secret)
	if s, err := results.Open(ctx, wrong); err == nil {
		s.Close()
		t.Error("Open with a wrong password succeeded")
	} else if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "\n") || !strings.Contains(msg, "--results") {
		t.Errorf("wrong password: error %q shows the password, is not one line, or gives no hint", msg)
	}
}

func TestPostgresOpenErrors(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	u, _ := url.Parse(dsn)

	foreign := pgtest.NewDatabase(t)
	adminExec(t, foreign, "CREATE TABLE runs (x int)", "INSERT INTO runs VALUES (1)")

	newer := pgtest.NewDatabase(t)
	s := storetest.Open(t, newer)
	r := storetest.FullRun(t, "", "", time.Now())
	storetest.Write(t, s, &r, results.StatusFinished, nil)
	if err := results.SetSchemaVersion(ctx, s, results.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	s.Close()

	noCreate := pgtest.NewDatabase(t)
	role := newRole(t, noCreate, "pw")

	missingSchema := withUser(t, dsn, "dblat", "", "search_path", "nosuchschema")
	missingDB := *u
	missingDB.Path = "/no_such_database"
	closedPort := "postgres://dblat@127.0.0.1:1/x?sslmode=disable&connect_timeout=5"

	cases := []struct {
		name     string
		loc      string
		contains []string
		is       error
	}{
		{"another program's tables", foreign, []string{"table runs that is not dblat's", "choose another database"}, nil},
		{"newer schema", newer, []string{fmt.Sprintf("schema version %d", results.SchemaVersion()+1), "upgrade dblat"}, results.ErrSchemaTooNew},
		{"no CREATE privilege", withUser(t, noCreate, role, "pw"), []string{"cannot create tables in schema public", "grant the user CREATE", "--results"}, nil},
		{"search_path names no schema", missingSchema, []string{"no schema of the search_path exists"}, nil},
		{"no such database", missingDB.String(), []string{"cannot connect", "no_such_database", "--results"}, nil},
		{"nothing listening", closedPort, []string{"cannot connect", "127.0.0.1:1", "--results"}, nil},
		{"bad DSN", "postgres://dblat@127.0.0.1:notaport/x", []string{"notaport", "--results"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := results.Open(ctx, tc.loc)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, c := range tc.contains {
				if !strings.Contains(msg, c) {
					t.Errorf("error %q does not contain %q", msg, c)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", msg, tc.is)
			}
		})
	}

	// Refusing touched nothing: the foreign table is as it was, the newer store keeps its
	// version and, once the version is back, its run.
	db, err := sql.Open("pgx", foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil || n != 1 {
		t.Errorf("foreign table: %d rows, %v", n, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 1 {
		t.Errorf("foreign database: %d tables, %v; want its own 1", n, err)
	}
	adminExec(t, newer, fmt.Sprintf("UPDATE dblat_schema SET version = %d", results.SchemaVersion()))
	s = storetest.Open(t, newer)
	if _, err := s.Get(ctx, r.ID, false); err != nil {
		t.Errorf("run lost after refused open: %v", err)
	}
}

// TestPostgresSearchPath keeps the store in a schema of its own, named in the URL, beside
// another program's tables of the same names.
func TestPostgresSearchPath(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	adminExec(t, dsn, "CREATE TABLE runs (x int)", "CREATE SCHEMA bench")
	s := storetest.Open(t, withUser(t, dsn, "dblat", "", "search_path", "bench"))
	r := storetest.FullRun(t, "sp", "", time.Now())
	storetest.Write(t, s, &r, results.StatusFinished, nil)
	var n int
	if err := results.DBOf(s).QueryRowContext(ctx, "SELECT count(*) FROM bench.run_figures").Scan(&n); err != nil || n != 1 {
		t.Errorf("bench.run_figures: %d rows, %v", n, err)
	}
}

// TestPostgresNativeTypes checks that the store is convenient from SQL: times are
// timestamptz, JSON columns jsonb, flags boolean.
func TestPostgresNativeTypes(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, pgtest.NewDatabase(t))
	r := storetest.FullRun(t, "", "", time.Date(2025, 6, 1, 10, 0, 0, 123456789, time.UTC))
	storetest.Write(t, s, &r, results.StatusFinished, nil)
	var (
		started  time.Time
		buffers  string
		think    bool
		retry    int64
		p50      float64
		examples string
	)
	err := results.DBOf(s).QueryRowContext(ctx, `SELECT started, settings ->> 'shared_buffers', think,
		(errors ->> 'retryable')::bigint, (link ->> 'achieved_p50')::float8 / 1e6, error_examples -> 'retryable' ->> 0
		FROM runs WHERE id = $1`, r.ID).Scan(&started, &buffers, &think, &retry, &p50, &examples)
	if err != nil {
		t.Fatal(err)
	}
	if !started.Equal(r.Started.Truncate(time.Microsecond)) || buffers != "8GB" || !think || retry != 12 ||
		p50 != 1.51 || examples != r.Summary.ErrorExamples["retryable"][0] {
		t.Errorf("read from SQL: %v %q %v %d %v %q", started, buffers, think, retry, p50, examples)
	}
}

// TestPostgresRefusedText stores a run whose text PostgreSQL cannot hold as such (a NUL
// character, invalid UTF-8): it lands, with those characters replaced.
func TestPostgresRefusedText(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, pgtest.NewDatabase(t))
	r := storetest.FullRun(t, "st\x00udy", "", time.Now())
	if _, err := s.Begin(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSamples(ctx, r.ID, []results.Sample{{Type: "bad\xff"}}); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Reason = results.StatusFailed, "server said \x00 and \xff\xfe"
	r.Summary.ErrorExamples = map[string][]string{"other": {"nul \x00 here", `a literal \u0000`}}
	r.Server.Settings = map[string]string{"odd\x00key": "v"}
	if err := s.Finish(ctx, &r); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	got, err := s.Get(ctx, r.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Study != "st\uFFFDudy" || got.Reason != "server said \uFFFD and \uFFFD" ||
		got.Summary.ErrorExamples["other"][0] != "nul \uFFFD here" || got.Summary.ErrorExamples["other"][1] != `a literal \u0000` ||
		got.Server.Settings["odd\uFFFDkey"] != "v" || got.Samples[0].Type != "bad\uFFFD" {
		t.Errorf("read back %q %q %q %v %q", got.Study, got.Reason, got.Summary.ErrorExamples, got.Server.Settings, got.Samples[0].Type)
	}
	if list, err := s.List(ctx, results.Filter{Study: "st\x00udy"}); err != nil || len(list) != 1 {
		t.Errorf("List by the study's name as given: %d runs, %v", len(list), err)
	}
}

// TestPostgresWriterRole checks the privileges docs/results-schema.md says a user needs
// once the store exists: USAGE on the schema and SELECT, INSERT, UPDATE, DELETE on its
// tables.
func TestPostgresWriterRole(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	storetest.Open(t, dsn).Close() // the owner creates the store
	role := newRole(t, dsn, "pw")
	adminExec(t, dsn, "GRANT USAGE ON SCHEMA public TO "+role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+role)
	s := storetest.Open(t, withUser(t, dsn, role, "pw"))
	r := storetest.FullRun(t, "w", "c", time.Now())
	storetest.Write(t, s, &r, results.StatusFinished, storetest.Samples(2, ""))
	if err := s.SaveStudy(ctx, results.Study{Name: "w", Factors: []string{}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, r.ID, true); err != nil || len(got.Samples) != 2 {
		t.Fatalf("Get: %v", err)
	}
	if _, err := s.MarkAbandoned(ctx); err != nil {
		t.Fatal(err)
	}
}
