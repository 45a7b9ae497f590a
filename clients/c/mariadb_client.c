/*
 * mariadb_client: the C client of dblat's client matrix on libmariadb (MariaDB Connector/C).
 * Each thread opens a connection, turns autocommit off (mysql_autocommit: the first
 * statement opens the transaction, no BEGIN) and runs transactions of
 *
 *   SELECT balance FROM dblat_clients WHERE id = ?
 *   UPDATE dblat_clients SET balance = balance + 1 WHERE id = ?
 *   COMMIT (mysql_commit)
 *
 * (the id from the thread's own share of 1..ROWS: thread k of N takes k+1, k+1+N, ..., so that
 * two threads never update one row) as prepared statements made once per connection (COM_STMT_PREPARE, then COM_STMT_EXECUTE
 * each time), or with -T as text queries with the id written in. It prints one JSON line:
 * the transactions committed, their mean latency and the throughput, as it measured them.
 *
 *   mariadb_client [-F OPTION_FILE] -h HOST -P PORT -u USER -D DB [-c THREADS] [-t TX]
 *                  [-r ROWS] [-T]
 *
 * The password comes from the [client] group of OPTION_FILE, a MySQL option file such as a
 * managed server's credentials/client.cnf (MYSQL_READ_DEFAULT_FILE, what the mariadb
 * client's --defaults-extra-file reads), never from the command line.
 */
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *host = "127.0.0.1", *user = "dblat", *db = "dblat", *optfile;
static unsigned port = 3306;
static int threads = 1, txs = 100, rows = 10000, text;
static long committed;
static double latency;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* connected: every thread has connected and prepared; then the clock starts; then go.
 * Starting the clock before the connections would time them; after a single barrier, a
 * thread could run transactions before the clock started. */
static pthread_barrier_t connected, go;

static const char *sel = "SELECT balance FROM dblat_clients WHERE id = ";
static const char *upd = "UPDATE dblat_clients SET balance = balance + 1 WHERE id = ";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(MYSQL *m, MYSQL_STMT *s, const char *what)
{
	fprintf(stderr, "mariadb_client: %s: %s\n", what, s ? mysql_stmt_error(s) : mysql_error(m));
	exit(1);
}

static MYSQL_STMT *prepare(MYSQL *m, const char *prefix)
{
	char q[160];
	snprintf(q, sizeof q, "%s?", prefix);
	MYSQL_STMT *s = mysql_stmt_init(m);
	if (!s || mysql_stmt_prepare(s, q, strlen(q)))
		die(m, s, "prepare");
	return s;
}

/* run executes one statement for id; a SELECT must find one row, an UPDATE change one. */
static void run(MYSQL *m, MYSQL_STMT *s, const char *prefix, int id, int isselect)
{
	if (text) {
		char q[160];
		snprintf(q, sizeof q, "%s%d", prefix, id);
		if (mysql_query(m, q))
			die(m, NULL, q);
		if (isselect) {
			MYSQL_RES *res = mysql_store_result(m);
			if (!res || mysql_num_rows(res) != 1)
				die(m, NULL, "select: not one row");
			mysql_free_result(res);
		} else if (mysql_affected_rows(m) != 1)
			die(m, NULL, "update: not one row");
		return;
	}
	MYSQL_BIND in;
	memset(&in, 0, sizeof in);
	in.buffer_type = MYSQL_TYPE_LONG;
	in.buffer = &id;
	if (mysql_stmt_bind_param(s, &in) || mysql_stmt_execute(s))
		die(m, s, "execute");
	if (isselect) {
		long long bal = 0;
		MYSQL_BIND out;
		memset(&out, 0, sizeof out);
		out.buffer_type = MYSQL_TYPE_LONGLONG;
		out.buffer = &bal;
		if (mysql_stmt_bind_result(s, &out) || mysql_stmt_store_result(s))
			die(m, s, "store");
		if (mysql_stmt_num_rows(s) != 1 || mysql_stmt_fetch(s))
			die(m, s, "select: not one row");
		mysql_stmt_free_result(s);
	} else if (mysql_stmt_affected_rows(s) != 1)
		die(m, s, "update: not one row");
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(long)arg + 1;
	MYSQL *m = mysql_init(NULL);
	/* A NULL password takes the option file's. */
	if (optfile && mysql_optionsv(m, MYSQL_READ_DEFAULT_FILE, optfile))
		die(m, NULL, "option file");
	if (!mysql_real_connect(m, host, user, optfile ? NULL : "", db, port, NULL, 0))
		die(m, NULL, "connect");
	if (mysql_autocommit(m, 0))
		die(m, NULL, "autocommit");
	MYSQL_STMT *s = text ? NULL : prepare(m, sel), *u = text ? NULL : prepare(m, upd);
	pthread_barrier_wait(&connected);
	pthread_barrier_wait(&go);
	double lat = 0;
	long n = 0;
	for (int i = 0; i < txs; i++) {
		int id = 1 + (int)(long)arg + threads * (rand_r(&seed) % (rows / threads > 0 ? rows / threads : 1));
		double t0 = now();
		run(m, s, sel, id, 1);
		run(m, u, upd, id, 0);
		if (mysql_commit(m))
			die(m, NULL, "commit");
		lat += now() - t0;
		n++;
	}
	if (s) {
		mysql_stmt_close(s);
		mysql_stmt_close(u);
	}
	mysql_close(m);
	pthread_mutex_lock(&mu);
	committed += n;
	latency += lat;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(a, "-T")) { text = 1; continue; }
		if (!strcmp(a, "-h")) host = v;
		else if (!strcmp(a, "-P")) port = atoi(v);
		else if (!strcmp(a, "-u")) user = v;
		else if (!strcmp(a, "-F")) optfile = v;
		else if (!strcmp(a, "-D")) db = v;
		else if (!strcmp(a, "-c")) threads = atoi(v);
		else if (!strcmp(a, "-t")) txs = atoi(v);
		else if (!strcmp(a, "-r")) rows = atoi(v);
		else { fprintf(stderr, "mariadb_client: unknown flag %s\n", a); return 2; }
		i++;
	}
	mysql_library_init(0, NULL, NULL);
	pthread_barrier_init(&connected, NULL, threads + 1);
	pthread_barrier_init(&go, NULL, threads + 1);
	pthread_t *ts = calloc(threads, sizeof *ts);
	for (long i = 0; i < threads; i++)
		pthread_create(&ts[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&connected);
	double start = now();
	pthread_barrier_wait(&go);
	for (int i = 0; i < threads; i++)
		pthread_join(ts[i], NULL);
	double elapsed = now() - start;
	printf("{\"version\":\"libmariadb %s\",\"committed\":%ld,\"elapsed_s\":%.6f,\"latency_ms_mean\":%.6f,\"tps\":%.6f}\n",
	       mysql_get_client_info(), committed, elapsed, committed ? latency / committed * 1e3 : 0.0,
	       committed / elapsed);
	mysql_library_end();
	return 0;
}
