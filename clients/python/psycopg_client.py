"""psycopg 3 (libpq underneath) in dblat's client matrix: autocommit off, so psycopg sends
BEGIN itself before the first statement; %s parameters bound server-side. libpq reads the
password from the pgpass file PGPASSFILE names."""
import psycopg

import common


def open_conn(args):
    conn = psycopg.connect(host=args.host, port=args.port, dbname=args.db, user=args.user, sslmode="disable")
    cur = conn.cursor()

    def tx(i):
        cur.execute(common.SELECT.format(p="%s"), (i,))
        if cur.fetchone() is None:
            raise RuntimeError(f"no row {i}")
        cur.execute(common.UPDATE.format(p="%s"), (i,))
        conn.commit()

    return conn, tx, ""


if __name__ == "__main__":
    common.main(open_conn, "psycopg " + psycopg.__version__ + " (libpq " + str(psycopg.pq.version()) + ")")
