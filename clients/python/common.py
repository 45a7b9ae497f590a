"""Shared by the Python clients of dblat's client matrix: flags, threads, timing, output.

Each client module defines open_conn(args) -> (conn, tx, what) where tx(id) runs one
transaction (SELECT balance by id, UPDATE it, COMMIT) on conn and what adds to the version
string, and calls main(). main opens one connection per thread, one after another, starts
the threads together (thread k of N draws its ids from k+1, k+1+N, ... so that two threads
never update one row), and prints one JSON line: the transactions committed, their mean
latency and the throughput, as the client measured them.

No password is given on the command line: the PostgreSQL clients read it from the pgpass
file PGPASSFILE names (libpq's way), the MariaDB ones from the MySQL option file
--option-file names (what --defaults-extra-file reads), the Firebird one from the file
--password-file names (what isql's -fetch_password reads).
"""
import argparse
import json
import random
import sys
import threading
import time

SELECT = "SELECT balance FROM dblat_clients WHERE id = {p}"
UPDATE = "UPDATE dblat_clients SET balance = balance + 1 WHERE id = {p}"


def parse(extra=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--user", default="dblat")
    ap.add_argument("--option-file", default=None, help="a MySQL option file whose [client] group holds the password")
    ap.add_argument("--password-file", default=None, help="a file that holds the password")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tx", type=int, default=100, help="transactions per thread")
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--mode", default="")
    if extra:
        extra(ap)
    return ap.parse_args()


def password(args):
    """The password in the file --password-file names."""
    with open(args.password_file) as f:
        return f.read().strip()


def main(open_conn, version, extra=None):
    args = parse(extra)
    ready = threading.Barrier(args.threads + 1)
    lock = threading.Lock()
    totals = {"committed": 0, "latency": 0.0}
    errors = []
    info = {}

    # Connect one after another in this thread: firebird-driver's first connect loads the
    # client library and is not safe to run from several threads at once.
    conns = [open_conn(args) for _ in range(args.threads)]
    info["what"] = conns[0][2]

    def worker(seed):
        try:
            conn, tx, _ = conns[seed]
            rnd = random.Random(seed)
            ready.wait()
            n, lat = 0, 0.0
            for _ in range(args.tx):
                i = 1 + seed + args.threads * rnd.randrange(max(1, args.rows // args.threads))
                t0 = time.perf_counter()
                tx(i)
                lat += time.perf_counter() - t0
                n += 1
            conn.close()
            with lock:
                totals["committed"] += n
                totals["latency"] += lat
        except Exception as e:  # reported below, the run fails
            errors.append(e)
            ready.abort()

    ts = [threading.Thread(target=worker, args=(s,)) for s in range(args.threads)]
    for t in ts:
        t.start()
    # The clock starts before the barrier lets the threads go: after it, a thread may
    # already have run transactions before this one reads the clock.
    start = time.perf_counter()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        pass
    for t in ts:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        print(repr(errors[0]), file=sys.stderr)
        sys.exit(1)
    k = totals["committed"]
    print(json.dumps({"version": version + info.get("what", ""), "committed": k, "elapsed_s": elapsed,
                      "latency_ms_mean": totals["latency"] / k * 1e3 if k else 0.0, "tps": k / elapsed}))
