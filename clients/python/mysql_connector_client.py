"""mysql-connector-python in dblat's client matrix: autocommit off (the driver's default:
the first statement opens the transaction, no BEGIN), a plain cursor (--mode text: the text
protocol, values interpolated by the client) or cursor(prepared=True) (--mode prepared:
COM_STMT_PREPARE and COM_STMT_EXECUTE). --pure forces the pure-Python implementation;
without it the driver picks its C extension when that loads; the output says which ran.
The password comes from the MySQL option file --option-file names (option_files)."""
import mysql.connector

import common


def extra(ap):
    ap.add_argument("--pure", action="store_true")


def open_conn(args):
    kw = {}
    if args.pure:
        kw["use_pure"] = True
    conn = mysql.connector.connect(option_files=args.option_file, host=args.host, port=args.port, user=args.user,
                                   database=args.db, ssl_disabled=True, autocommit=False, **kw)
    cur = conn.cursor(prepared=args.mode == "prepared")

    def tx(i):
        cur.execute(common.SELECT.format(p="%s"), (i,))
        if cur.fetchone() is None:
            raise RuntimeError(f"no row {i}")
        cur.execute(common.UPDATE.format(p="%s"), (i,))
        conn.commit()

    impl = "C extension" if type(conn).__name__.startswith("CMySQL") else "pure Python"
    return conn, tx, f", {impl}"


if __name__ == "__main__":
    common.main(open_conn, "mysql-connector-python " + mysql.connector.__version__, extra)
