// Command goclient is the Go client of dblat's client matrix: pgx (native interface),
// go-sql-driver/mysql and nakagami/firebirdsql (through database/sql), as applications call
// them. Each of its clients opens a connection, then runs transactions of
//
//	BEGIN (the driver's way); SELECT balance FROM dblat_clients WHERE id = ?;
//	UPDATE dblat_clients SET balance = balance + 1 WHERE id = ?; COMMIT
//
// with an id drawn uniformly from the client's own share of 1..ROWS (client k of N takes the
// ids k+1, k+1+N, ...: two clients never update one row, so no update conflicts), and it prints one JSON line: the transactions
// committed, their mean latency and the throughput, as the client measured them.
//
//	goclient -driver pgx|mysql|firebird -dsn DSN [-option-file F | -password-file F]
//	         [-threads N] [-tx N] [-rows N]
//
// The DSN is the driver's own: a postgres:// URL for pgx (sslmode=disable for the proxy),
// USER@tcp(HOST:PORT)/DB for mysql, USER@HOST:PORT/PATH?wire_crypt=false for firebirdsql.
// The password is never on the command line: pgx reads it from the pgpass file PGPASSFILE
// names (or the DSN's passfile=), mysql's from the [client] group of the MySQL option file
// -option-file names (as the mariadb client's --defaults-extra-file), firebirdsql's from
// the file -password-file names (as isql's -fetch_password).
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	_ "github.com/nakagami/firebirdsql"
)

const (
	selectSQL = "SELECT balance FROM dblat_clients WHERE id = "
	updateSQL = "UPDATE dblat_clients SET balance = balance + 1 WHERE id = "
)

// result is the line the client prints.
type result struct {
	Version   string  `json:"version"`
	Committed int64   `json:"committed"`
	ElapsedS  float64 `json:"elapsed_s"`
	LatencyMs float64 `json:"latency_ms_mean"`
	TPS       float64 `json:"tps"`
}

// txFunc runs one transaction for id.
type txFunc func(ctx context.Context, id int) error

func main() {
	driver := flag.String("driver", "pgx", "pgx, mysql or firebird")
	dsn := flag.String("dsn", "", "the driver's DSN")
	threads := flag.Int("threads", 1, "clients, one connection each")
	txs := flag.Int("tx", 100, "transactions per client")
	rows := flag.Int("rows", 10000, "ids are drawn from 1..rows")
	optionFile := flag.String("option-file", "", "mysql: a MySQL option file whose [client] group holds the password")
	passwordFile := flag.String("password-file", "", "firebird: a file that holds the password")
	flag.Parse()
	d, err := withPassword(*driver, *dsn, *optionFile, *passwordFile)
	if err == nil {
		err = run(*driver, d, *threads, *txs, *rows)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

func run(driver, dsn string, threads, txs, rows int) error {
	ctx := context.Background()
	fns := make([]txFunc, threads)
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	module := map[string]string{"pgx": "github.com/jackc/pgx/v5", "mysql": "github.com/go-sql-driver/mysql",
		"firebird": "github.com/nakagami/firebirdsql"}[driver]
	if module == "" {
		return fmt.Errorf("unknown driver %q", driver)
	}
	for i := range fns {
		var err error
		var closer func()
		if driver == "pgx" {
			fns[i], closer, err = openPgx(ctx, dsn)
		} else {
			name := driver
			if driver == "firebird" {
				name = "firebirdsql"
			}
			fns[i], closer, err = openSQL(ctx, name, dsn)
		}
		if err != nil {
			return err
		}
		closers = append(closers, closer)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var committed int64
	var latency time.Duration
	var firstErr error
	start := time.Now()
	for i, fn := range fns {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(i)+1, 0x9e3779b97f4a7c15))
			var n int64
			var lat time.Duration
			for range txs {
				id := 1 + i + threads*rnd.IntN(max(1, rows/threads))
				t0 := time.Now()
				if err := fn(ctx, id); err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				lat += time.Since(t0)
				n++
			}
			mu.Lock()
			committed += n
			latency += lat
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return firstErr
	}
	r := result{Version: driver + " " + moduleVersion(module), Committed: committed, ElapsedS: elapsed.Seconds(),
		TPS: float64(committed) / elapsed.Seconds()}
	if committed > 0 {
		r.LatencyMs = float64(latency) / float64(committed) / 1e6
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

// withPassword puts the password that the option file or the password file holds into dsn,
// for the drivers that read no such file themselves.
func withPassword(driver, dsn, optionFile, passwordFile string) (string, error) {
	switch {
	case driver == "mysql" && optionFile != "":
		pw, err := optionPassword(optionFile)
		if err != nil {
			return "", err
		}
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "", err
		}
		cfg.Passwd = pw
		return cfg.FormatDSN(), nil
	case driver == "firebird" && passwordFile != "":
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return "", err
		}
		user, rest, ok := strings.Cut(dsn, "@")
		if !ok {
			return "", fmt.Errorf("firebird DSN without USER@")
		}
		return user + ":" + url.QueryEscape(strings.TrimSpace(string(b))) + "@" + rest, nil
	}
	return dsn, nil
}

// optionPassword returns the password= of the [client] group of a MySQL option file, as
// dblat writes them (key=value lines, no quoting).
func optionPassword(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	group := ""
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			group = strings.Trim(line, "[]")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && group == "client" && strings.TrimSpace(k) == "password" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s: no password in its [client] group", file)
}

// openPgx connects with pgx's native interface: Begin sends BEGIN, statements go through
// the extended protocol with pgx's statement cache (prepared on first use per connection).
func openPgx(ctx context.Context, dsn string) (txFunc, func(), error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	fn := func(ctx context.Context, id int) error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
		var bal int64
		if err := tx.QueryRow(ctx, selectSQL+"$1", id).Scan(&bal); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, updateSQL+"$1", id); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	return fn, func() { c.Close(ctx) }, nil
}

// openSQL connects through database/sql with one connection: BeginTx, QueryRowContext and
// ExecContext with ? parameters, Commit.
func openSQL(ctx context.Context, name, dsn string) (txFunc, func(), error) {
	db, err := sql.Open(name, dsn)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	fn := func(ctx context.Context, id int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
		var bal int64
		if err := tx.QueryRowContext(ctx, selectSQL+"?", id).Scan(&bal); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, updateSQL+"?", id); err != nil {
			return err
		}
		return tx.Commit()
	}
	return fn, func() { db.Close() }, nil
}

// moduleVersion returns the version of module this binary was built with.
func moduleVersion(module string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				return d.Version
			}
		}
	}
	return "(unknown)"
}
