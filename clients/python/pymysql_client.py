"""PyMySQL in dblat's client matrix: pure Python, the text protocol with values
interpolated by the client, autocommit off (the first statement opens the transaction).
The password comes from the MySQL option file --option-file names (read_default_file)."""
from importlib.metadata import version

import pymysql

import common


def open_conn(args):
    conn = pymysql.connect(read_default_file=args.option_file, host=args.host, port=args.port, user=args.user,
                           database=args.db, autocommit=False)
    cur = conn.cursor()

    def tx(i):
        cur.execute(common.SELECT.format(p="%s"), (i,))
        if cur.fetchone() is None:
            raise RuntimeError(f"no row {i}")
        cur.execute(common.UPDATE.format(p="%s"), (i,))
        conn.commit()

    return conn, tx, ""


if __name__ == "__main__":
    # pymysql.__version__ is the mysqlclient version it stands in for, not its own.
    common.main(open_conn, "PyMySQL " + version("PyMySQL"))
