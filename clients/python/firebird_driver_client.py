"""firebird-driver (on Debian's fbclient) in dblat's client matrix. The proxy cannot follow
an encrypted Firebird connection: the client's configuration override (isc_dpb_config)
turns wire encryption off, "WireCrypt = Disabled". --db is the database file's path on the
server; the driver starts its transaction with the first statement; parameters are ?. The
password comes from the file --password-file names."""
from firebird.driver import connect, driver_config, __VERSION__

import common


def open_conn(args):
    driver_config.db_defaults.config.value = "WireCrypt = Disabled"
    conn = connect(f"inet://{args.host}:{args.port}/{args.db}", user=args.user, password=common.password(args))
    cur = conn.cursor()

    def tx(i):
        cur.execute(common.SELECT.format(p="?"), (i,))
        if cur.fetchone() is None:
            raise RuntimeError(f"no row {i}")
        cur.execute(common.UPDATE.format(p="?"), (i,))
        conn.commit()

    return conn, tx, ""


if __name__ == "__main__":
    common.main(open_conn, "firebird-driver " + __VERSION__)
