package firebird

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/managed"
)

// RecordStats returns the record and version statistics of the benchmark database (bench.fdb)
// of the running managed server inst: it is DatabaseRecordStats(ctx, inst, "").
func RecordStats(ctx context.Context, inst *managed.Instance) (map[string]float64, error) {
	return DatabaseRecordStats(ctx, inst, "")
}

// DatabaseRecordStats returns the record and version statistics of every user table of the
// database of the running managed server inst that dsn names ("" for the benchmark
// database; see Database for the others): what `gstat -r` (Debian: fbstat -r)
// prints, taken through the server's service manager (fbsvcmgr action_db_stats
// sts_record_versions), logged in as SYSDBA with the password from the instance's password
// file. Seed 001 takes them before and after every session, to see how much garbage a
// session left behind.
//
// The keys, for each user table T (named as gstat prints it, e.g. "gstat.ORDER_LINE.versions"):
//
//	gstat.T.records              total records (primary record versions)
//	gstat.T.avg_record_length    average record length in bytes (compressed, on page)
//	gstat.T.versions             total back versions (garbage not yet collected)
//	gstat.T.max_versions         the longest version chain of one record
//	gstat.T.avg_version_length   average back-version length in bytes
//	gstat.T.data_pages           data pages
//	gstat.T.fill_pct             average fill of the data pages, 0-100
//
// and over all user tables gstat.total.records and gstat.total.versions ("total" is lower
// case, which an unquoted table name never is). System tables (RDB$, MON$, SEC$, PLG$) are
// left out. A database without user tables gives the two totals, both 0.
//
// Why the service manager: Firebird 3.0's gstat takes a host in the database name but
// ignores it (and ignores -user/-password) and reads the file directly; that fails with
// "Database already opened with engine instance" while a Super server has the database
// open. Through the service manager the server itself runs gstat's analysis, in every
// architecture. The password never appears on a command line: fbsvcmgr reads it from the
// password file (fetch_password), whose path alone is in its argv. Scanning all data pages
// reads the whole database once; it costs time on a large database and is meant for
// before and after a session, not during one. gstat reads the pages from the database file,
// where the server writes a transaction's changed pages by its commit at the latest, so
// committed work is always counted.
func DatabaseRecordStats(ctx context.Context, inst *managed.Instance, dsn string) (map[string]float64, error) {
	if inst.PID == 0 {
		return nil, fmt.Errorf("server %s is not running", inst.Name)
	}
	db, err := databaseFile(inst, dsn)
	if err != nil {
		return nil, err
	}
	svcmgr, err := clientTool(inst, "fbsvcmgr")
	if err != nil {
		return nil, err
	}
	cmd := command(nil, inst.Dir, svcmgr,
		fmt.Sprintf("127.0.0.1/%d:service_mgr", inst.Port),
		"user", sysdba, "fetch_password", PasswordFile(inst),
		"action_db_stats", "dbname", db, "sts_record_versions")
	out, err := runCmd(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("fbsvcmgr action_db_stats %s: %v: %s", db, err, lastLines(out, 3))
	}
	st, err := parseRecordStats(out)
	if err != nil {
		return nil, fmt.Errorf("fbsvcmgr action_db_stats %s: %w", db, err)
	}
	return st, nil
}

// clientTool finds a Firebird client program (gfix, fbsvcmgr) for inst: in the directory of
// the server's binaries (the --fb-bin directory of an installer's layout), else on PATH
// (Debian installs the server in /usr/sbin and the tools in /usr/bin).
func clientTool(inst *managed.Instance, name string) (string, error) {
	if inst.Binaries != "" {
		p := filepath.Join(inst.Binaries, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found (in %s or on PATH): %s", name, inst.Binaries, InstallHint)
	}
	return p, nil
}

// gstatFields maps gstat's per-table labels (lower case) to RecordStats' key suffixes. The
// labels are those of Firebird 3.0.11 (testdata/gstat_*.txt).
var gstatFields = map[string]string{
	"total records":          "records",
	"average record length":  "avg_record_length",
	"total versions":         "versions",
	"max versions":           "max_versions",
	"average version length": "avg_version_length",
	"data pages":             "data_pages",
	"average fill":           "fill_pct",
}

var (
	// gstatTable is a table's heading, "NAME (relation id)" at the start of a line.
	gstatTable = regexp.MustCompile(`^(\S.*) \((\d+)\)$`)
	// gstatIndex is an index's heading inside a table's section.
	gstatIndex = regexp.MustCompile(`^\s+Index .* \(\d+\)$`)
)

// systemTable reports whether gstat's table name is a system table's.
func systemTable(name string) bool {
	for _, p := range []string{"RDB$", "MON$", "SEC$", "PLG$"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// parseRecordStats reads the output of `gstat -r` (or fbsvcmgr action_db_stats
// sts_record_versions) into RecordStats' keys. It takes the tables from the line
// "Analyzing database pages ..." on, reads the comma-separated "label: value" pairs of each
// table's own lines (up to its first index) and stops at "Gstat completion time". Trailing
// blanks (the service manager adds one to every line) and CR line ends do not matter. It
// fails when the analysis is missing and when a user table lacks the record statistics
// (gstat run without -r).
func parseRecordStats(out string) (map[string]float64, error) {
	st := map[string]float64{"gstat.total.records": 0, "gstat.total.versions": 0}
	var (
		analysis bool
		table    string // the user table whose lines are being read, "" elsewhere
		inIndex  bool
		tables   []string
		seen     = map[string]map[string]bool{}
	)
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if !analysis {
			analysis = strings.HasPrefix(line, "Analyzing database pages")
			continue
		}
		if strings.HasPrefix(line, "Gstat completion time") {
			break
		}
		if m := gstatTable.FindStringSubmatch(line); m != nil {
			table, inIndex = "", false
			if name := strings.TrimSpace(m[1]); !systemTable(name) {
				if seen[name] != nil {
					return nil, fmt.Errorf("gstat output lists table %s twice", name)
				}
				table = name
				tables = append(tables, name)
				seen[name] = map[string]bool{}
			}
			continue
		}
		if table == "" || inIndex {
			continue
		}
		if gstatIndex.MatchString(line) {
			inIndex = true
			continue
		}
		for _, pair := range strings.Split(line, ",") {
			label, value, ok := strings.Cut(pair, ":")
			if !ok {
				continue
			}
			key, ok := gstatFields[strings.ToLower(strings.TrimSpace(label))]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), "%"), 64)
			if err != nil {
				return nil, fmt.Errorf("gstat output, table %s: %q: %v", table, strings.TrimSpace(pair), err)
			}
			st["gstat."+table+"."+key] = v
			seen[table][key] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !analysis {
		return nil, errors.New("no page analysis in gstat's output: " + lastLines(out, 3))
	}
	for _, t := range tables {
		if !seen[t]["records"] || !seen[t]["versions"] {
			return nil, fmt.Errorf("gstat output has no record and version statistics for table %s (not run with -r?)", t)
		}
		st["gstat.total.records"] += st["gstat."+t+".records"]
		st["gstat.total.versions"] += st["gstat."+t+".versions"]
	}
	return st, nil
}
