package simple

import (
	"context"
	"database/sql"
	"fmt"
)

// blobRange picks BlobsPerTx consecutive ids, uniformly among the windows that fit in
// 1..BlobRows.
func (t *terminal) blobRange() (lo, hi int64) {
	n := t.w.cfg.BlobsPerTx
	lo = t.random(1, t.w.blobRows-n+1)
	return lo, lo + int64(n) - 1
}

// blobRead reads the blobs of BlobsPerTx consecutive rows with one SELECT, the case seed 000
// warns about: Firebird's wire protocol fetches rows in batches but every blob value apart,
// with at least two round trips of its own (engines.md §1.7), where PostgreSQL and MariaDB
// send the values inline with the rows. It is a single statement, run like select-only
// (alone, or in a read-only transaction where autocommit is unsafe). It fails if a row is
// missing or a blob has the wrong size.
func (t *terminal) blobRead(ctx context.Context, conn *sql.Conn) error {
	lo, hi := t.in.lo, t.in.hi
	a := t.args[:2]
	a[0], a[1] = lo, hi
	return t.single(ctx, conn, func(tx *sql.Tx) error {
		rows, err := t.w.selBlobs.query(ctx, conn, tx, a)
		if err != nil {
			return err
		}
		defer rows.Close()
		var n int64
		var id int64
		var data sql.RawBytes // no copy: only its length is checked
		for rows.Next() {
			if err := rows.Scan(&id, &data); err != nil {
				return err
			}
			if len(data) != t.w.blobSize {
				return fmt.Errorf("simple blob: row %d holds %d bytes, want %d", id, len(data), t.w.blobSize)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != hi-lo+1 {
			return fmt.Errorf("simple blob: ids %d..%d gave %d rows", lo, hi, n)
		}
		return rows.Close()
	})
}

// blobWrite replaces the blobs of BlobsPerTx consecutive rows, one UPDATE per row in
// ascending id order, in one transaction at Dialect.LockingIsolation. Each new value is
// BlobSize bytes taken at an offset of the terminal's random buffer that Next drew.
func (t *terminal) blobWrite(ctx context.Context, conn *sql.Conn) error {
	lo, hi := t.in.lo, t.in.hi
	size := t.w.blobSize
	a := t.args[:2]
	return inTx(ctx, conn, t.w.rw, func(tx *sql.Tx) error {
		for id := lo; id <= hi; id++ {
			off := t.in.offsets[id-lo]
			a[0], a[1] = t.blobBuf[off:off+size], id
			if err := t.w.updBlob.exec(ctx, tx, a); err != nil {
				return err
			}
		}
		return nil
	})
}
