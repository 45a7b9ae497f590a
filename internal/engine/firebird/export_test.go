package firebird

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// LoadBlocks loads with blocks of k rows (k = 0: one prepared INSERT per row) in one
// transaction, for measuring the loader's alternatives.
func LoadBlocks(ctx context.Context, db *sql.DB, table string, cols []string, k int, next func([]any) bool) (int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var n int64
	if k > 0 {
		n, err = loadBlocks(ctx, tx, table, cols, k, next)
	} else {
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Repeat("?, ", len(cols)-1) + "?)"
		var s *sql.Stmt
		if s, err = tx.PrepareContext(ctx, q); err != nil {
			return 0, err
		}
		row := make([]any, len(cols))
		for next(row) {
			if _, err = s.ExecContext(ctx, row...); err != nil {
				s.Close()
				return 0, err
			}
			n++
		}
		s.Close()
	}
	if err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

func listenLoopback(port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// ExternalLoads returns how many CopyRows calls on db loaded through an external table.
func ExternalLoads(db *sql.DB) int64 {
	d, ok := db.Driver().(connDriver)
	if !ok {
		return 0
	}
	return d.c.externalLoads.Load()
}

// WireConn returns the connection the driver's wire channel reads and writes under c.
func WireConn(c *sql.Conn) (net.Conn, error) {
	var nc net.Conn
	err := c.Raw(func(dc any) error {
		d, _ := dc.(driver.Conn)
		if u, ok := d.(interface{ Unwrap() driver.Conn }); ok {
			d = u.Unwrap()
		}
		w, ok := wireOf(d)
		if !ok {
			return fmt.Errorf("no wire channel in %T", dc)
		}
		nc, _ = w.conn.Interface().(net.Conn)
		return nil
	})
	return nc, err
}
