package tpcc

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// Fingerprint returns a hash of every TPC-C table's contents, read in primary-key order:
// two databases loaded with the same seed and loader version have the same fingerprint,
// and any changed value changes it. Timestamps are left out (they are the clock at load,
// §4.3.3.1), except for whether the nullable ones are NULL. Values are hashed as the
// driver renders them, so fingerprints compare loads on one engine. The tables are read
// in parallel on separate connections, not in one snapshot: fingerprint a database no one
// is writing to. It wraps workload.ErrNotLoaded when there is no completed load.
func Fingerprint(ctx context.Context, db *sql.DB) (string, error) {
	m, err := readMeta(ctx, db)
	if err != nil {
		return "", err
	}
	sums := make([][]byte, len(tables))
	errs := make([]error, len(tables))
	var wg sync.WaitGroup
	for i, t := range tables {
		wg.Go(func() { sums[i], errs[i] = hashTable(ctx, db, t) })
	}
	wg.Wait()
	h := sha256.New()
	fmt.Fprintf(h, "tpcc loader %d\n", m.version)
	for i, t := range tables {
		if errs[i] != nil {
			return "", fmt.Errorf("fingerprint %s: %w", t.name, errs[i])
		}
		h.Write([]byte(t.name))
		h.Write(sums[i])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashTable hashes t's rows in key order (HISTORY, which has no key, in the order of all
// its hashed columns).
func hashTable(ctx context.Context, db *sql.DB, t *table) ([]byte, error) {
	var sel, order []string
	for _, c := range t.cols {
		if c.typ == tTimestamp {
			sel = append(sel, "CASE WHEN "+c.name+" IS NULL THEN 0 ELSE 1 END")
			continue
		}
		sel = append(sel, c.name)
		if len(t.pk) == 0 {
			order = append(order, c.name)
		}
	}
	if len(t.pk) > 0 {
		order = t.pk
	}
	rows, err := db.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+t.name+" ORDER BY "+strings.Join(order, ", "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := make([]sql.RawBytes, len(sel))
	ptrs := make([]any, len(sel))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	h := sha256.New()
	sep := []byte{0x1f}
	end := []byte{0x1e}
	null := []byte{0}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for _, v := range vals {
			if v == nil {
				h.Write(null)
			}
			h.Write(v)
			h.Write(sep)
		}
		h.Write(end)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
