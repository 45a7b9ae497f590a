package results

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"
)

// applicationID marks a SQLite file as a dblat results database (PRAGMA application_id),
// so that Open refuses to add tables to some other program's database.
const applicationID = 0x64626c74 // "dblt"

// sqliteSteps are the SQLite schema steps in order; sqliteSteps[i] brings the schema from
// version i to version i+1 (the version is PRAGMA user_version). Steps are only ever
// appended: a step that has shipped is never edited, since databases already at its version
// will not rerun it.
var sqliteSteps = []step{
	// 1: initial schema.
	{version: 1, sql: `
CREATE TABLE runs (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	study          TEXT    NOT NULL DEFAULT '',
	cell_key       TEXT    NOT NULL DEFAULT '',
	status         TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'aborted')),
	reason         TEXT    NOT NULL DEFAULT '',
	started        TEXT    NOT NULL, -- UTC, fixed width, sorts as text
	ended          TEXT,             -- NULL while running or when unknown

	-- Params
	workload       TEXT    NOT NULL,
	scale          INTEGER NOT NULL,
	terminals      INTEGER NOT NULL,
	connections    INTEGER NOT NULL,
	duration_ns    INTEGER NOT NULL,
	warmup_ns      INTEGER NOT NULL,
	seed           INTEGER NOT NULL,
	think          INTEGER NOT NULL,
	rtt_ns         INTEGER NOT NULL,
	mix            TEXT,             -- JSON object or NULL
	options        TEXT,             -- JSON object or NULL

	-- Server
	engine         TEXT    NOT NULL,
	target         TEXT    NOT NULL,
	managed        INTEGER NOT NULL,
	server_version TEXT    NOT NULL,
	settings       TEXT,             -- JSON object or NULL
	database_bytes INTEGER NOT NULL,

	-- Client: hostname and pid as columns for crash detection, the whole of it as JSON.
	hostname       TEXT    NOT NULL,
	pid            INTEGER NOT NULL,
	client         TEXT    NOT NULL,

	stats_before   TEXT,             -- JSON object or NULL
	stats_after    TEXT,             -- JSON object or NULL

	-- Summary
	elapsed_ns     INTEGER NOT NULL DEFAULT 0,
	committed      INTEGER NOT NULL DEFAULT 0,
	rollbacks      INTEGER NOT NULL DEFAULT 0,
	errors         TEXT,             -- JSON object or NULL
	tps            REAL    NOT NULL DEFAULT 0,
	tpm            REAL    NOT NULL DEFAULT 0,
	nopm           REAL    NOT NULL DEFAULT 0
);
CREATE INDEX runs_study_cell ON runs (study, cell_key);
CREATE INDEX runs_cell_key   ON runs (cell_key);
CREATE INDEX runs_started    ON runs (started);
CREATE INDEX runs_running    ON runs (status) WHERE status = 'running';

CREATE TABLE run_tx (
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	ord          INTEGER NOT NULL, -- position in Run.Tx
	type         TEXT    NOT NULL,
	committed    INTEGER NOT NULL,
	rollbacks    INTEGER NOT NULL,
	errors       TEXT,             -- JSON object or NULL
	mean_us      REAL    NOT NULL,
	p50_us       INTEGER NOT NULL,
	p90_us       INTEGER NOT NULL,
	p95_us       INTEGER NOT NULL,
	p99_us       INTEGER NOT NULL,
	p999_us      INTEGER NOT NULL,
	max_us       INTEGER NOT NULL,
	wait_mean_us REAL    NOT NULL,
	wait_p99_us  INTEGER NOT NULL,
	-- wire cost per committed transaction (0 when not metered)
	round_trips     REAL    NOT NULL DEFAULT 0,
	round_trips_p50 INTEGER NOT NULL DEFAULT 0,
	round_trips_p99 INTEGER NOT NULL DEFAULT 0,
	bytes_up        REAL    NOT NULL DEFAULT 0,
	bytes_down      REAL    NOT NULL DEFAULT 0,
	writes_up       REAL    NOT NULL DEFAULT 0,
	hist         TEXT    NOT NULL DEFAULT '', -- base64 HDR V2 compressed
	wait_hist    TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, type)
) WITHOUT ROWID;

-- Rows of one run are read back in insertion (rowid) order.
CREATE TABLE run_samples (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	offset_ns INTEGER NOT NULL,
	type      TEXT    NOT NULL,
	committed INTEGER NOT NULL,
	errors    INTEGER NOT NULL,
	p50_us    INTEGER NOT NULL,
	p99_us    INTEGER NOT NULL,
	max_us    INTEGER NOT NULL
);
CREATE INDEX run_samples_run ON run_samples (run_id);
`},
	// 2: the latency link each run went through, and study definitions.
	{version: 2, sql: `
ALTER TABLE runs ADD COLUMN link TEXT; -- JSON object or NULL (no link)

CREATE TABLE studies (
	name    TEXT PRIMARY KEY,
	file    TEXT NOT NULL,   -- path the study was last run from
	source  TEXT NOT NULL,   -- the study file's text as last run
	factors TEXT NOT NULL,   -- JSON array of factor keys
	created TEXT NOT NULL,
	updated TEXT NOT NULL
) WITHOUT ROWID;
`},
	// 3: examples of the errors a run counted, so that "other 40" can be explained.
	{version: 3, sql: `
ALTER TABLE runs ADD COLUMN error_examples TEXT; -- JSON object class -> messages, or NULL
`},
	// 4: a stable identity per run, so that runs can be copied between stores once (Import),
	// and views for analysis in SQL. The unique index on uid follows the backfill.
	{version: 4, sql: `
ALTER TABLE runs ADD COLUMN uid TEXT NOT NULL DEFAULT ''; -- UUID

-- One row per run: its factors and headline figures, in the units the columns name.
CREATE VIEW run_figures AS
SELECT
	id, uid, study, cell_key, status, reason, started, ended,
	workload, engine, server_version, target, managed, hostname,
	scale AS warehouses, terminals, connections,
	rtt_ns / 1e6 AS rtt_ms,
	think,
	duration_ns / 1e9 AS duration_s,
	warmup_ns / 1e9 AS warmup_s,
	json_extract(link, '$.kind') AS link_kind,
	json_extract(link, '$.achieved_p50') / 1e6 AS link_rtt_p50_ms,
	json_extract(link, '$.achieved_p99') / 1e6 AS link_rtt_p99_ms,
	options, settings,
	elapsed_ns / 1e9 AS elapsed_s,
	committed, rollbacks,
	coalesce((SELECT sum(e.value) FROM json_each(runs.errors) e), 0) AS errors,
	tps, tpm, nopm
FROM runs;

-- One row per run and transaction type: percentiles in milliseconds and wire cost.
CREATE VIEW run_tx_percentiles AS
SELECT
	t.run_id, r.study, r.cell_key, r.status, t.type,
	t.committed, t.rollbacks,
	(t.committed + t.rollbacks) * 1e9 / nullif(r.elapsed_ns, 0) AS tps,
	t.mean_us / 1e3 AS mean_ms,
	t.p50_us / 1e3 AS p50_ms, t.p90_us / 1e3 AS p90_ms, t.p95_us / 1e3 AS p95_ms,
	t.p99_us / 1e3 AS p99_ms, t.p999_us / 1e3 AS p999_ms, t.max_us / 1e3 AS max_ms,
	t.wait_mean_us / 1e3 AS wait_mean_ms, t.wait_p99_us / 1e3 AS wait_p99_ms,
	t.round_trips, t.round_trips_p50, t.round_trips_p99, t.bytes_up, t.bytes_down
FROM run_tx t JOIN runs r ON r.id = t.run_id;

-- One row per run and server setting as the server reported it.
CREATE VIEW run_settings AS
SELECT r.id AS run_id, s.key AS name, s.value AS value
FROM runs r, json_each(r.settings) s;

-- One row per run and requested option (workload and engine options, "set.*" settings).
CREATE VIEW run_options AS
SELECT r.id AS run_id, o.key AS name, o.value AS value
FROM runs r, json_each(r.options) o;
`, fill: backfillUIDs},
	// 5: the workload's headline figure each run reports (NOPM, TPS).
	{version: 5, sql: `
ALTER TABLE runs ADD COLUMN metric TEXT NOT NULL DEFAULT '';
`},
	// 6: open-loop runs (arrival rate, latency limit, offered, skipped and unstarted
	// arrivals, overload), retries (max tries, retries per run and type), and per type the
	// response time from the intended start and the schedule lag.
	{version: 6, sql: `
-- Open loop (rate > 0; rate 0 is a closed-loop run) and retries.
ALTER TABLE runs ADD COLUMN rate REAL NOT NULL DEFAULT 0;          -- arrivals per second
ALTER TABLE runs ADD COLUMN arrival TEXT NOT NULL DEFAULT '';      -- constant, poisson
ALTER TABLE runs ADD COLUMN latency_limit_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_tries INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN late INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN offered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN backlog INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN achieved_rate REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN overload INTEGER NOT NULL DEFAULT 0;

-- Response time (from the intended start) and schedule lag per type, and retries.
ALTER TABLE run_tx ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_mean_us REAL NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_p50_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_p90_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_p99_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_max_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN lag_mean_us REAL NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN lag_p99_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN lag_max_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_hist TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tx ADD COLUMN lag_hist TEXT NOT NULL DEFAULT '';

ALTER TABLE run_samples ADD COLUMN resp_p99_us INTEGER NOT NULL DEFAULT 0;

-- The views gain the new columns.
DROP VIEW run_figures;
CREATE VIEW run_figures AS
SELECT
	id, uid, study, cell_key, status, reason, started, ended,
	workload, engine, server_version, target, managed, hostname,
	scale AS warehouses, terminals, connections,
	rtt_ns / 1e6 AS rtt_ms,
	think,
	duration_ns / 1e9 AS duration_s,
	warmup_ns / 1e9 AS warmup_s,
	json_extract(link, '$.kind') AS link_kind,
	json_extract(link, '$.achieved_p50') / 1e6 AS link_rtt_p50_ms,
	json_extract(link, '$.achieved_p99') / 1e6 AS link_rtt_p99_ms,
	options, settings,
	elapsed_ns / 1e9 AS elapsed_s,
	committed, rollbacks,
	coalesce((SELECT sum(e.value) FROM json_each(runs.errors) e), 0) AS errors,
	tps, tpm, nopm,
	metric, rate, arrival, latency_limit_ns / 1e6 AS latency_limit_ms, max_tries,
	retries, retried, late, offered, skipped, backlog, achieved_rate, overload
FROM runs;

DROP VIEW run_tx_percentiles;
CREATE VIEW run_tx_percentiles AS
SELECT
	t.run_id, r.study, r.cell_key, r.status, t.type,
	t.committed, t.rollbacks,
	(t.committed + t.rollbacks) * 1e9 / nullif(r.elapsed_ns, 0) AS tps,
	t.mean_us / 1e3 AS mean_ms,
	t.p50_us / 1e3 AS p50_ms, t.p90_us / 1e3 AS p90_ms, t.p95_us / 1e3 AS p95_ms,
	t.p99_us / 1e3 AS p99_ms, t.p999_us / 1e3 AS p999_ms, t.max_us / 1e3 AS max_ms,
	t.wait_mean_us / 1e3 AS wait_mean_ms, t.wait_p99_us / 1e3 AS wait_p99_ms,
	t.round_trips, t.round_trips_p50, t.round_trips_p99, t.bytes_up, t.bytes_down,
	t.resp_mean_us / 1e3 AS resp_mean_ms,
	t.resp_p50_us / 1e3 AS resp_p50_ms, t.resp_p90_us / 1e3 AS resp_p90_ms,
	t.resp_p99_us / 1e3 AS resp_p99_ms, t.resp_max_us / 1e3 AS resp_max_ms,
	t.lag_mean_us / 1e3 AS lag_mean_ms, t.lag_p99_us / 1e3 AS lag_p99_ms, t.lag_max_us / 1e3 AS lag_max_ms,
	t.retries, t.retried
FROM run_tx t JOIN runs r ON r.id = t.run_id;
`},
	// 7: runs driven by several agents (issue 15): the agents a store knows, each run's
	// parts (one per agent: its assignment, clock offset, announced and actual start, the
	// part's own figures) and, on the run, how many agents drove it and their start skew.
	// Times of the coordination tables are nanoseconds since the Unix epoch on the store's
	// clock, the same on both backends.
	{version: 7, sql: `
ALTER TABLE runs ADD COLUMN agents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN start_skew_ns INTEGER NOT NULL DEFAULT 0;

CREATE TABLE agents (
	name         TEXT    PRIMARY KEY,
	hostname     TEXT    NOT NULL,
	pid          INTEGER NOT NULL,
	joined_ns    INTEGER NOT NULL,
	heartbeat_ns INTEGER NOT NULL,
	run_id       INTEGER           -- the run whose part it works on; NULL when idle
);

CREATE TABLE run_parts (
	run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	agent           TEXT    NOT NULL,
	ord             INTEGER NOT NULL,
	state           TEXT    NOT NULL CHECK (state IN ('assigned', 'ready', 'running', 'done', 'failed')),
	assignment      TEXT    NOT NULL, -- JSON, written by the coordinator
	clock_offset_ns INTEGER NOT NULL DEFAULT 0,
	start_at_ns     INTEGER NOT NULL DEFAULT 0,
	started_ns      INTEGER NOT NULL DEFAULT 0,
	reason          TEXT    NOT NULL DEFAULT '',
	result          TEXT,             -- JSON run of the part, with its samples
	PRIMARY KEY (run_id, agent),
	UNIQUE (run_id, ord)
);
`},
	// 8: an application's traffic observed through dblat proxy --observe, stored as a run
	// of workload "observed" (issue 24): the observation itself (per-shape figures, serial
	// sections), from which reports predict what a farther database would cost.
	{version: 8, sql: `
ALTER TABLE runs ADD COLUMN observation TEXT; -- JSON or NULL
`},
	// 9: the texts runs ran (the script workload's scripts and init scripts): each text
	// once, by its SHA-256, and per run which it ran, as which transaction type, at which
	// weight.
	{version: 9, sql: `
-- The script workload's parameters (spec.Params): its scripts and built-in scripts as
-- given (FILE[@WEIGHT]; JSON arrays or NULL), its -D defines (a JSON object or NULL), its
-- init script.
ALTER TABLE runs ADD COLUMN scripts  TEXT;
ALTER TABLE runs ADD COLUMN builtins TEXT;
ALTER TABLE runs ADD COLUMN defines  TEXT;
ALTER TABLE runs ADD COLUMN init     TEXT NOT NULL DEFAULT '';

CREATE TABLE script_texts (
	sha256 TEXT PRIMARY KEY,
	text   TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE run_scripts (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	ord    INTEGER NOT NULL,
	kind   TEXT    NOT NULL CHECK (kind IN ('script', 'builtin', 'init')),
	name   TEXT    NOT NULL,
	path   TEXT    NOT NULL,
	weight REAL    NOT NULL DEFAULT 0,
	sha256 TEXT    NOT NULL REFERENCES script_texts (sha256),
	PRIMARY KEY (run_id, ord)
);
`},
	// 10: the warm-up each run had (issue 25): whether it was automatic (ended when
	// throughput was steady, warmup_ns its ceiling) and how long it ran. Runs stored before
	// had the warm-up they asked for.
	{version: 10, sql: `
ALTER TABLE runs ADD COLUMN warmup_auto INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN warmup_used_ns INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET warmup_used_ns = warmup_ns;
`},
	// 11: the connect timeout each run's connections had (issue 36); 0, the drivers'
	// defaults, for runs stored before.
	{version: 11, sql: `
ALTER TABLE runs ADD COLUMN connect_timeout_ns INTEGER NOT NULL DEFAULT 0;
`},
	// 12: what disturbed each run (issue 41): the longest stall of every interval, the
	// host's, dblat's and the server's signals per interval, the disturbances named from
	// them, whether a study set the run aside, and the count a window ran on until
	// (min_transactions). Runs stored before have none.
	{version: 12, sql: `
ALTER TABLE run_samples ADD COLUMN stall_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN min_transactions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN disturbances TEXT; -- JSON array or NULL
ALTER TABLE runs ADD COLUMN set_aside TEXT NOT NULL DEFAULT '';

-- Rows of one run are read back by offset, then name.
CREATE TABLE run_signals (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	offset_ns INTEGER NOT NULL,
	span_ns   INTEGER NOT NULL,
	name      TEXT    NOT NULL,
	value     REAL    NOT NULL
);
CREATE INDEX run_signals_run ON run_signals (run_id);
`},
	// 13: the link's shape as run parameters (issue 43): the one-way split, jitter and its
	// shape, bandwidth, loss and the network profile named. Runs stored before take them
	// from the link they recorded (fillLinkShape).
	{version: 13, sql: `
ALTER TABLE runs ADD COLUMN up_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN down_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN jitter_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN distribution TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN bandwidth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN loss REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN profile TEXT NOT NULL DEFAULT '';
`, fill: fillLinkShape(false)},
	// 14: seed 001's remaining questions (issue 44): the operation a run started during its
	// window as asked (during: "backup@30s", '' for none) and what became of it (operations:
	// name, tool, times, outcome), and the memory limit its managed server ran under, read
	// back from its cgroup (0: the machine's memory). Runs stored before had none of them.
	{version: 14, sql: `
ALTER TABLE runs ADD COLUMN during TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN operations TEXT; -- JSON array or NULL
ALTER TABLE runs ADD COLUMN memory_limit INTEGER NOT NULL DEFAULT 0;
`},
}

// fillLinkShape returns step 13's fill: a run stored before the link's shape was a run
// parameter gets it from its link column, where it was recorded as the link ran: the
// jitter and its shape (uniform as the empty text), the bandwidth (the same each way: dblat run's only
// way to set it), and the one-way delays where they split the RTT otherwise than evenly.
func fillLinkShape(pg bool) func(ctx context.Context, tx *sql.Tx) error {
	num := func(key string) string { return "json_extract(link, '$." + key + "')" }
	text := num
	if pg {
		num = func(key string) string { return "(link ->> '" + key + "')::bigint" }
		text = func(key string) string { return "(link ->> '" + key + "')" }
	}
	q := `UPDATE runs SET
	jitter_ns = coalesce(` + num("jitter") + `, 0),
	distribution = CASE WHEN coalesce(` + num("jitter") + `, 0) > 0 AND ` + text("distribution") + ` <> 'uniform'
		THEN ` + text("distribution") + ` ELSE '' END,
	bandwidth = coalesce(` + num("bandwidth_up") + `, 0),
	up_ns = CASE WHEN ` + num("up") + ` <> rtt_ns / 2 OR ` + num("down") + ` <> rtt_ns - rtt_ns / 2 THEN ` + num("up") + ` ELSE 0 END,
	down_ns = CASE WHEN ` + num("up") + ` <> rtt_ns / 2 OR ` + num("down") + ` <> rtt_ns - rtt_ns / 2 THEN ` + num("down") + ` ELSE 0 END
WHERE link IS NOT NULL`
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	}
}

// step is one schema migration: sql runs first, then fill (if any), in the transaction
// that sets the schema version to version.
type step struct {
	version int
	sql     string
	fill    func(ctx context.Context, tx *sql.Tx) error
}

// uidSpace is the UUID namespace of the identities given to runs stored before runs had one.
var uidSpace = uuid.MustParse("5f1e3f3c-6a0b-4c5e-9d1a-64626c740004")

// backfillUIDs gives every run without a uid one derived from what identified it before
// (host, pid, start time to the nanosecond, and its id in this file): a name-based UUID
// (version 5), so that two copies of one file migrated apart still agree on their runs'
// identities. Then it makes uid unique.
func backfillUIDs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, hostname, pid, started FROM runs WHERE uid = ''")
	if err != nil {
		return err
	}
	type legacy struct {
		id      int64
		host    string
		pid     int64
		started string
	}
	var runs []legacy
	for rows.Next() {
		var l legacy
		if err := rows.Scan(&l.id, &l.host, &l.pid, &l.started); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, l)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	for _, l := range runs {
		name := fmt.Sprintf("%s\x00%d\x00%s\x00%d", l.host, l.pid, l.started, l.id)
		uid := uuid.NewSHA1(uidSpace, []byte(name)).String()
		if _, err := tx.ExecContext(ctx, "UPDATE runs SET uid = ? WHERE id = ?", uid, l.id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, "CREATE UNIQUE INDEX runs_uid ON runs (uid)")
	return err
}

// postgresSteps are the PostgreSQL schema steps, applied like sqliteSteps (the version is
// the one row of dblat_schema). PostgreSQL stores start at version 4 with their own DDL:
// native types (timestamptz, jsonb, boolean), the same tables, columns and views as SQLite
// version 4, plus the <time>_nanos columns that keep run times exact and run_samples.seq,
// the insertion order SQLite keeps as rowid. Later versions append a step to both lists.
var postgresSteps = []step{
	{version: 4, sql: `
CREATE TABLE runs (
	id             bigint  GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	uid            uuid    NOT NULL UNIQUE,
	study          text    NOT NULL DEFAULT '',
	cell_key       text    NOT NULL DEFAULT '',
	status         text    NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'aborted')),
	reason         text    NOT NULL DEFAULT '',
	started        timestamptz NOT NULL,
	started_nanos  smallint    NOT NULL DEFAULT 0 CHECK (started_nanos BETWEEN 0 AND 999),
	ended          timestamptz,
	ended_nanos    smallint    NOT NULL DEFAULT 0 CHECK (ended_nanos BETWEEN 0 AND 999),

	workload       text    NOT NULL,
	scale          integer NOT NULL,
	terminals      integer NOT NULL,
	connections    integer NOT NULL,
	duration_ns    bigint  NOT NULL,
	warmup_ns      bigint  NOT NULL,
	seed           bigint  NOT NULL,
	think          boolean NOT NULL,
	rtt_ns         bigint  NOT NULL,
	mix            jsonb,
	options        jsonb,
	link           jsonb,

	engine         text    NOT NULL,
	target         text    NOT NULL,
	managed        boolean NOT NULL,
	server_version text    NOT NULL,
	settings       jsonb,
	database_bytes bigint  NOT NULL,

	hostname       text    NOT NULL,
	pid            integer NOT NULL,
	client         jsonb   NOT NULL,

	stats_before   jsonb,
	stats_after    jsonb,

	elapsed_ns     bigint  NOT NULL DEFAULT 0,
	committed      bigint  NOT NULL DEFAULT 0,
	rollbacks      bigint  NOT NULL DEFAULT 0,
	errors         jsonb,
	error_examples jsonb,
	tps            double precision NOT NULL DEFAULT 0,
	tpm            double precision NOT NULL DEFAULT 0,
	nopm           double precision NOT NULL DEFAULT 0
);
CREATE INDEX runs_study_cell ON runs (study, cell_key);
CREATE INDEX runs_cell_key   ON runs (cell_key);
CREATE INDEX runs_started    ON runs (started);
CREATE INDEX runs_running    ON runs (status) WHERE status = 'running';

CREATE TABLE run_tx (
	run_id          bigint  NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	ord             integer NOT NULL,
	type            text    NOT NULL,
	committed       bigint  NOT NULL,
	rollbacks       bigint  NOT NULL,
	errors          jsonb,
	mean_us         double precision NOT NULL,
	p50_us          bigint  NOT NULL,
	p90_us          bigint  NOT NULL,
	p95_us          bigint  NOT NULL,
	p99_us          bigint  NOT NULL,
	p999_us         bigint  NOT NULL,
	max_us          bigint  NOT NULL,
	wait_mean_us    double precision NOT NULL,
	wait_p99_us     bigint  NOT NULL,
	round_trips     double precision NOT NULL DEFAULT 0,
	round_trips_p50 bigint  NOT NULL DEFAULT 0,
	round_trips_p99 bigint  NOT NULL DEFAULT 0,
	bytes_up        double precision NOT NULL DEFAULT 0,
	bytes_down      double precision NOT NULL DEFAULT 0,
	writes_up       double precision NOT NULL DEFAULT 0,
	hist            text    NOT NULL DEFAULT '',
	wait_hist       text    NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, type)
);

CREATE TABLE run_samples (
	seq       bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_id    bigint  NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	offset_ns bigint  NOT NULL,
	type      text    NOT NULL,
	committed bigint  NOT NULL,
	errors    bigint  NOT NULL,
	p50_us    bigint  NOT NULL,
	p99_us    bigint  NOT NULL,
	max_us    bigint  NOT NULL
);
CREATE INDEX run_samples_run ON run_samples (run_id, seq);

CREATE TABLE studies (
	name    text PRIMARY KEY,
	file    text NOT NULL,
	source  text NOT NULL,
	factors jsonb NOT NULL,
	created timestamptz NOT NULL,
	updated timestamptz NOT NULL
);

CREATE VIEW run_figures AS
SELECT
	id, uid, study, cell_key, status, reason, started, ended,
	workload, engine, server_version, target, managed, hostname,
	scale AS warehouses, terminals, connections,
	rtt_ns::float8 / 1e6 AS rtt_ms,
	think,
	duration_ns::float8 / 1e9 AS duration_s,
	warmup_ns::float8 / 1e9 AS warmup_s,
	link ->> 'kind' AS link_kind,
	(link ->> 'achieved_p50')::float8 / 1e6 AS link_rtt_p50_ms,
	(link ->> 'achieved_p99')::float8 / 1e6 AS link_rtt_p99_ms,
	options, settings,
	elapsed_ns::float8 / 1e9 AS elapsed_s,
	committed, rollbacks,
	coalesce((SELECT sum(e.value::bigint) FROM jsonb_each_text(runs.errors) e), 0)::bigint AS errors,
	tps, tpm, nopm
FROM runs;

CREATE VIEW run_tx_percentiles AS
SELECT
	t.run_id, r.study, r.cell_key, r.status, t.type,
	t.committed, t.rollbacks,
	(t.committed + t.rollbacks)::float8 * 1e9 / nullif(r.elapsed_ns, 0) AS tps,
	t.mean_us / 1e3 AS mean_ms,
	t.p50_us::float8 / 1e3 AS p50_ms, t.p90_us::float8 / 1e3 AS p90_ms,
	t.p95_us::float8 / 1e3 AS p95_ms, t.p99_us::float8 / 1e3 AS p99_ms,
	t.p999_us::float8 / 1e3 AS p999_ms, t.max_us::float8 / 1e3 AS max_ms,
	t.wait_mean_us / 1e3 AS wait_mean_ms, t.wait_p99_us::float8 / 1e3 AS wait_p99_ms,
	t.round_trips, t.round_trips_p50, t.round_trips_p99, t.bytes_up, t.bytes_down
FROM run_tx t JOIN runs r ON r.id = t.run_id;

CREATE VIEW run_settings AS
SELECT r.id AS run_id, s.key AS name, s.value AS value
FROM runs r CROSS JOIN LATERAL jsonb_each_text(r.settings) s;

CREATE VIEW run_options AS
SELECT r.id AS run_id, o.key AS name, o.value AS value
FROM runs r CROSS JOIN LATERAL jsonb_each_text(r.options) o;
`},
	// 5: the workload's headline figure each run reports (NOPM, TPS).
	{version: 5, sql: `
ALTER TABLE runs ADD COLUMN metric text NOT NULL DEFAULT '';
`},
	// 6: as SQLite's step 6.
	{version: 6, sql: `
-- Open loop (rate > 0; rate 0 is a closed-loop run) and retries.
ALTER TABLE runs ADD COLUMN rate double precision NOT NULL DEFAULT 0;          -- arrivals per second
ALTER TABLE runs ADD COLUMN arrival text NOT NULL DEFAULT '';      -- constant, poisson
ALTER TABLE runs ADD COLUMN latency_limit_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_tries integer NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN retries bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN retried bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN late bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN offered bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN skipped bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN backlog bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN achieved_rate double precision NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN overload boolean NOT NULL DEFAULT false;

-- Response time (from the intended start) and schedule lag per type, and retries.
ALTER TABLE run_tx ADD COLUMN retries bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN retried bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_mean_us double precision NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_p50_us bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_p90_us bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_p99_us bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_max_us bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN lag_mean_us double precision NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN lag_p99_us bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN lag_max_us bigint NOT NULL DEFAULT 0;
ALTER TABLE run_tx ADD COLUMN resp_hist text NOT NULL DEFAULT '';
ALTER TABLE run_tx ADD COLUMN lag_hist text NOT NULL DEFAULT '';

ALTER TABLE run_samples ADD COLUMN resp_p99_us bigint NOT NULL DEFAULT 0;

-- The views gain the new columns.
DROP VIEW run_figures;
CREATE VIEW run_figures AS
SELECT
	id, uid, study, cell_key, status, reason, started, ended,
	workload, engine, server_version, target, managed, hostname,
	scale AS warehouses, terminals, connections,
	rtt_ns::float8 / 1e6 AS rtt_ms,
	think,
	duration_ns::float8 / 1e9 AS duration_s,
	warmup_ns::float8 / 1e9 AS warmup_s,
	link ->> 'kind' AS link_kind,
	(link ->> 'achieved_p50')::float8 / 1e6 AS link_rtt_p50_ms,
	(link ->> 'achieved_p99')::float8 / 1e6 AS link_rtt_p99_ms,
	options, settings,
	elapsed_ns::float8 / 1e9 AS elapsed_s,
	committed, rollbacks,
	coalesce((SELECT sum(e.value::bigint) FROM jsonb_each_text(runs.errors) e), 0)::bigint AS errors,
	tps, tpm, nopm,
	metric, rate, arrival, latency_limit_ns::float8 / 1e6 AS latency_limit_ms, max_tries,
	retries, retried, late, offered, skipped, backlog, achieved_rate, overload
FROM runs;

DROP VIEW run_tx_percentiles;
CREATE VIEW run_tx_percentiles AS
SELECT
	t.run_id, r.study, r.cell_key, r.status, t.type,
	t.committed, t.rollbacks,
	(t.committed + t.rollbacks)::float8 * 1e9 / nullif(r.elapsed_ns, 0) AS tps,
	t.mean_us / 1e3 AS mean_ms,
	t.p50_us::float8 / 1e3 AS p50_ms, t.p90_us::float8 / 1e3 AS p90_ms,
	t.p95_us::float8 / 1e3 AS p95_ms, t.p99_us::float8 / 1e3 AS p99_ms,
	t.p999_us::float8 / 1e3 AS p999_ms, t.max_us::float8 / 1e3 AS max_ms,
	t.wait_mean_us / 1e3 AS wait_mean_ms, t.wait_p99_us::float8 / 1e3 AS wait_p99_ms,
	t.round_trips, t.round_trips_p50, t.round_trips_p99, t.bytes_up, t.bytes_down,
	t.resp_mean_us / 1e3 AS resp_mean_ms,
	t.resp_p50_us::float8 / 1e3 AS resp_p50_ms, t.resp_p90_us::float8 / 1e3 AS resp_p90_ms,
	t.resp_p99_us::float8 / 1e3 AS resp_p99_ms, t.resp_max_us::float8 / 1e3 AS resp_max_ms,
	t.lag_mean_us / 1e3 AS lag_mean_ms, t.lag_p99_us::float8 / 1e3 AS lag_p99_ms,
	t.lag_max_us::float8 / 1e3 AS lag_max_ms,
	t.retries, t.retried
FROM run_tx t JOIN runs r ON r.id = t.run_id;
`},
	// 7: as SQLite's step 7.
	{version: 7, sql: `
ALTER TABLE runs ADD COLUMN agents integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN start_skew_ns bigint NOT NULL DEFAULT 0;

CREATE TABLE agents (
	name         text    PRIMARY KEY,
	hostname     text    NOT NULL,
	pid          integer NOT NULL,
	joined_ns    bigint  NOT NULL,
	heartbeat_ns bigint  NOT NULL,
	run_id       bigint
);

CREATE TABLE run_parts (
	run_id          bigint  NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	agent           text    NOT NULL,
	ord             integer NOT NULL,
	state           text    NOT NULL CHECK (state IN ('assigned', 'ready', 'running', 'done', 'failed')),
	assignment      jsonb   NOT NULL,
	clock_offset_ns bigint  NOT NULL DEFAULT 0,
	start_at_ns     bigint  NOT NULL DEFAULT 0,
	started_ns      bigint  NOT NULL DEFAULT 0,
	reason          text    NOT NULL DEFAULT '',
	result          jsonb,
	PRIMARY KEY (run_id, agent),
	UNIQUE (run_id, ord)
);
`},
	// 8: as SQLite's step 8.
	{version: 8, sql: `
ALTER TABLE runs ADD COLUMN observation jsonb;
`},
	// 9: as SQLite's step 9.
	{version: 9, sql: `
ALTER TABLE runs ADD COLUMN scripts  jsonb;
ALTER TABLE runs ADD COLUMN builtins jsonb;
ALTER TABLE runs ADD COLUMN defines  jsonb;
ALTER TABLE runs ADD COLUMN init     text NOT NULL DEFAULT '';

CREATE TABLE script_texts (
	sha256 text PRIMARY KEY,
	text   text NOT NULL
);

CREATE TABLE run_scripts (
	run_id bigint  NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	ord    integer NOT NULL,
	kind   text    NOT NULL CHECK (kind IN ('script', 'builtin', 'init')),
	name   text    NOT NULL,
	path   text    NOT NULL,
	weight double precision NOT NULL DEFAULT 0,
	sha256 text    NOT NULL REFERENCES script_texts (sha256),
	PRIMARY KEY (run_id, ord)
);
`},
	// 10: as SQLite's step 10.
	{version: 10, sql: `
ALTER TABLE runs ADD COLUMN warmup_auto boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD COLUMN warmup_used_ns bigint NOT NULL DEFAULT 0;
UPDATE runs SET warmup_used_ns = warmup_ns;
`},
	// 11: as SQLite's step 11.
	{version: 11, sql: `
ALTER TABLE runs ADD COLUMN connect_timeout_ns bigint NOT NULL DEFAULT 0;
`},
	// 12: as SQLite's step 12.
	{version: 12, sql: `
ALTER TABLE run_samples ADD COLUMN stall_us bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN min_transactions integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN disturbances jsonb;
ALTER TABLE runs ADD COLUMN set_aside text NOT NULL DEFAULT '';

CREATE TABLE run_signals (
	run_id    bigint           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	offset_ns bigint           NOT NULL,
	span_ns   bigint           NOT NULL,
	name      text             NOT NULL,
	value     double precision NOT NULL
);
CREATE INDEX run_signals_run ON run_signals (run_id);
`},
	// 13: as SQLite's step 13.
	{version: 13, sql: `
ALTER TABLE runs ADD COLUMN up_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN down_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN jitter_ns bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN distribution text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN bandwidth bigint NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN loss double precision NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN profile text NOT NULL DEFAULT '';
`, fill: fillLinkShape(true)},
	// 14: as SQLite's step 14.
	{version: 14, sql: `
ALTER TABLE runs ADD COLUMN during text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN operations jsonb;
ALTER TABLE runs ADD COLUMN memory_limit bigint NOT NULL DEFAULT 0;
`},
}

// SchemaVersion returns the schema version this build of dblat writes, on either backend.
func SchemaVersion() int { return sqliteSteps[len(sqliteSteps)-1].version }
