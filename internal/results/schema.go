package results

// applicationID marks a SQLite file as a dblat results database (PRAGMA application_id),
// so that Open refuses to add tables to some other program's database.
const applicationID = 0x64626c74 // "dblt"

// migrations are the schema steps in order; migrations[i] brings the schema from version i
// to version i+1 (the version is PRAGMA user_version). Steps are only ever appended: a step
// that has shipped is never edited, since databases already at its version will not rerun it.
var migrations = []string{
	// 1: initial schema.
	`
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
`, // 2: the latency link each run went through, and study definitions.
	`
ALTER TABLE runs ADD COLUMN link TEXT; -- JSON object or NULL (no link)

CREATE TABLE studies (
	name    TEXT PRIMARY KEY,
	file    TEXT NOT NULL,   -- path the study was last run from
	source  TEXT NOT NULL,   -- the study file's text as last run
	factors TEXT NOT NULL,   -- JSON array of factor keys
	created TEXT NOT NULL,
	updated TEXT NOT NULL
) WITHOUT ROWID;
`, // 3: examples of the errors a run counted, so that "other 40" can be explained.
	`
ALTER TABLE runs ADD COLUMN error_examples TEXT; -- JSON object class -> messages, or NULL
`, // 4: the workload's headline figure each run reports (NOPM, TPS).
	`
ALTER TABLE runs ADD COLUMN metric TEXT NOT NULL DEFAULT '';
`,
}
