/*
 * stmtclient: a C client on libmariadb (MariaDB Connector/C), the tests' stand-in for an
 * application that uses prepared statements through the C API. Each of its threads opens
 * a connection, prepares its statement once and runs transactions of BEGIN, SELECTs by
 * primary key and COMMIT; at the end it prints "transactions: N", the number committed, and
 * "latency_ms: X", their mean time from BEGIN to COMMIT's answer.
 *
 *   stmtclient [-F OPTION_FILE] -h HOST -P PORT -u USER -D DB [-c THREADS] [-t TX]
 *              [-s SELECTS] [-r ROWS] [-T | -X] [-U] [-C]
 *   stmtclient ... -S      create and fill the table stmt_t (ROWS rows), then exit
 *
 * -F names a MySQL option file whose [client] group gives the password (a managed server's
 * credentials/client.cnf), as --defaults-extra-file does for MariaDB's own clients.
 * -T runs the SELECTs as text queries (prepared statements off); -X with
 * mariadb_stmt_execute_direct (prepare and execute sent together, every time); -U reads the
 * rows unbuffered (no mysql_stmt_store_result); -C executes with a read-only cursor (the
 * rows come with COM_STMT_FETCH).
 */
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *host = "127.0.0.1", *user = "dblat", *db = "dblat", *optfile;
static unsigned port = 3306;
static int threads = 4, txs = 25, selects = 14, rows = 100;
static int text, direct, unbuffered, cursor;
static long committed;
static double latency; /* seconds, summed over the committed transactions */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static const char *query = "SELECT id, v, n FROM stmt_t WHERE id = ?";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(MYSQL *m, MYSQL_STMT *s, const char *what)
{
	fprintf(stderr, "stmtclient: %s: %s\n", what, s ? mysql_stmt_error(s) : mysql_error(m));
	exit(1);
}

static MYSQL *open_conn(void)
{
	MYSQL *m = mysql_init(NULL);
	/* The password comes from the option file's [client] group: NULL takes it from there. */
	if (optfile && mysql_optionsv(m, MYSQL_READ_DEFAULT_FILE, optfile))
		die(m, NULL, "option file");
	if (!mysql_real_connect(m, host, user, optfile ? NULL : "", db, port, NULL, 0))
		die(m, NULL, "connect");
	return m;
}

/* select_one runs the statement for one id and checks that it found one row. */
static void select_one(MYSQL *m, MYSQL_STMT *st, int id)
{
	if (text) {
		char q[128];
		snprintf(q, sizeof q, "SELECT id, v, n FROM stmt_t WHERE id = %d", id);
		if (mysql_query(m, q))
			die(m, NULL, "select");
		MYSQL_RES *res = mysql_store_result(m);
		if (!res)
			die(m, NULL, "select result");
		if (mysql_num_rows(res) != 1) {
			fprintf(stderr, "stmtclient: id %d: %llu rows\n", id, (unsigned long long)mysql_num_rows(res));
			exit(1);
		}
		mysql_free_result(res);
		return;
	}
	MYSQL_BIND param, res[3];
	int rid;
	char v[32];
	unsigned long vlen;
	double n;
	memset(&param, 0, sizeof param);
	memset(res, 0, sizeof res);
	param.buffer_type = MYSQL_TYPE_LONG;
	param.buffer = &id;
	if (direct) {
		unsigned int count = 1;
		if (mysql_stmt_attr_set(st, STMT_ATTR_PREBIND_PARAMS, &count) || mysql_stmt_bind_param(st, &param))
			die(m, st, "bind");
		if (mariadb_stmt_execute_direct(st, query, strlen(query)))
			die(m, st, "execute direct");
	} else if (mysql_stmt_bind_param(st, &param) || mysql_stmt_execute(st)) {
		die(m, st, "execute");
	}
	res[0].buffer_type = MYSQL_TYPE_LONG;
	res[0].buffer = &rid;
	res[1].buffer_type = MYSQL_TYPE_STRING;
	res[1].buffer = v;
	res[1].buffer_length = sizeof v;
	res[1].length = &vlen;
	res[2].buffer_type = MYSQL_TYPE_DOUBLE;
	res[2].buffer = &n;
	if (mysql_stmt_bind_result(st, res))
		die(m, st, "bind result");
	if (!unbuffered && mysql_stmt_store_result(st))
		die(m, st, "store result");
	int rc, got = 0;
	while ((rc = mysql_stmt_fetch(st)) == 0 || rc == MYSQL_DATA_TRUNCATED)
		got++;
	if (rc != MYSQL_NO_DATA)
		die(m, st, "fetch");
	if (got != 1 || rid != id) {
		fprintf(stderr, "stmtclient: id %d: %d rows\n", id, got);
		exit(1);
	}
	if (mysql_stmt_free_result(st))
		die(m, st, "free result");
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(size_t)arg;
	mysql_thread_init();
	MYSQL *m = open_conn();
	MYSQL_STMT *st = NULL;
	if (!text) {
		st = mysql_stmt_init(m);
		if (!st)
			die(m, NULL, "statement");
		if (cursor) {
			unsigned long type = CURSOR_TYPE_READ_ONLY;
			if (mysql_stmt_attr_set(st, STMT_ATTR_CURSOR_TYPE, &type))
				die(m, st, "cursor");
		}
		if (!direct && mysql_stmt_prepare(st, query, strlen(query)))
			die(m, st, "prepare");
	}
	for (int t = 0; t < txs; t++) {
		double t0 = now();
		if (mysql_query(m, "BEGIN"))
			die(m, NULL, "BEGIN");
		for (int i = 0; i < selects; i++)
			select_one(m, st, 1 + (int)(rand_r(&seed) % (unsigned)rows));
		if (mysql_commit(m))
			die(m, NULL, "COMMIT");
		double took = now() - t0;
		pthread_mutex_lock(&mu);
		committed++;
		latency += took;
		pthread_mutex_unlock(&mu);
	}
	if (st && mysql_stmt_close(st))
		die(m, NULL, "close");
	mysql_close(m);
	mysql_thread_end();
	return NULL;
}

static void setup(void)
{
	MYSQL *m = open_conn();
	char q[128];
	if (mysql_query(m, "CREATE TABLE stmt_t (id INT PRIMARY KEY, v VARCHAR(20), n DOUBLE) ENGINE=InnoDB"))
		die(m, NULL, "create");
	for (int i = 1; i <= rows; i++) {
		snprintf(q, sizeof q, "INSERT INTO stmt_t VALUES (%d, 'row %d', %d.5)", i, i, i);
		if (mysql_query(m, q))
			die(m, NULL, "insert");
	}
	mysql_close(m);
}

int main(int argc, char **argv)
{
	int c, create = 0;
	while ((c = getopt(argc, argv, "F:h:P:u:D:c:t:s:r:TXUCS")) != -1) {
		switch (c) {
		case 'F': optfile = optarg; break;
		case 'h': host = optarg; break;
		case 'P': port = (unsigned)atoi(optarg); break;
		case 'u': user = optarg; break;
		case 'D': db = optarg; break;
		case 'c': threads = atoi(optarg); break;
		case 't': txs = atoi(optarg); break;
		case 's': selects = atoi(optarg); break;
		case 'r': rows = atoi(optarg); break;
		case 'T': text = 1; break;
		case 'X': direct = 1; break;
		case 'U': unbuffered = 1; break;
		case 'C': cursor = 1; break;
		case 'S': create = 1; break;
		default:
			fprintf(stderr, "usage: stmtclient -h HOST -P PORT -u USER -D DB [-c THREADS] [-t TX] [-s SELECTS] [-r ROWS] [-T|-X] [-U] [-C] [-S]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || rows < 1) {
		fprintf(stderr, "stmtclient: 1 to 64 threads and at least 1 row\n");
		return 2;
	}
	if (mysql_library_init(0, NULL, NULL)) {
		fprintf(stderr, "stmtclient: cannot initialise libmariadb\n");
		return 1;
	}
	if (create) {
		setup();
	} else {
		pthread_t th[64];
		for (int i = 0; i < threads; i++)
			if (pthread_create(&th[i], NULL, worker, (void *)(size_t)(i + 1)) != 0) {
				fprintf(stderr, "stmtclient: cannot start a thread\n");
				return 1;
			}
		for (int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		printf("transactions: %ld\n", committed);
		if (committed > 0)
			printf("latency_ms: %.3f\n", 1000 * latency / committed);
	}
	mysql_library_end();
	return 0;
}
