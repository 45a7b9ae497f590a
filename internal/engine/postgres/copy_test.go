package postgres_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

type valuer string

func (v valuer) Value() (driver.Value, error) { return string(v), nil }

// cents is a decimal sent through encoding.TextAppender.
type cents int64

func (c cents) AppendText(b []byte) ([]byte, error) {
	return fmt.Appendf(b, "%d.%02d", c/100, c%100), nil
}

// TestCopyRowsRoundTrip stores every kind of value CopyRows accepts, including text that
// must be escaped, and reads it back.
func TestCopyRowsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Engine{}.Open(ctx, pgtest.NewDatabase(t), engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (i bigint, s text, n numeric(8,2), ts timestamp, f float8, b bool, v text)`); err != nil {
		t.Fatal(err)
	}
	tricky := "tab\there\\back\nnew\rret üñí 0123456789"
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	i, s := int64(-7), tricky
	c := cents(1234)
	rows := [][]any{
		{int64(1), "plain", &c, ts, 1.5, true, valuer("v1")},
		{&i, &s, (*cents)(nil), &ts, nil, false, (*valuer)(nil)},
		{3, (*string)(nil), "-0.01", ts, -2.25, nil, valuer("x\ty")},
	}
	k := 0
	n, err := postgres.Engine{}.CopyRows(ctx, db, "t", []string{"i", "s", "n", "ts", "f", "b", "v"}, func(row []any) bool {
		if k == len(rows) {
			return false
		}
		copy(row, rows[k])
		k++
		return true
	})
	if err != nil || n != 3 {
		t.Fatalf("CopyRows = %d, %v", n, err)
	}
	var got string
	err = db.QueryRow(`SELECT string_agg(concat_ws('|', i, s, n, to_char(ts, 'YYYY-MM-DD HH24:MI:SS.US'), f, b, v), E'#' ORDER BY i) FROM t`).Scan(&got)
	if err != nil {
		t.Fatal(err)
	}
	want := "-7|" + tricky + "|2024-02-29 13:14:15.123456|f#" +
		"1|plain|12.34|2024-02-29 13:14:15.123456|1.5|t|v1#" +
		"3|-0.01|2024-02-29 13:14:15.123456|-2.25|x\ty"
	if got != want {
		t.Errorf("read back\n%q\nwant\n%q", got, want)
	}

	// An unsupported value aborts the COPY with the encoder's error, and nothing is stored.
	_, err = postgres.Engine{}.CopyRows(ctx, db, "t", []string{"i"}, func(row []any) bool { row[0] = struct{}{}; return true })
	if err == nil || !strings.Contains(err.Error(), "cannot encode struct {}") {
		t.Errorf("unsupported value: err = %v", err)
	}
	var count int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&count); err != nil || count != 3 {
		t.Errorf("rows after failed COPY = %d, %v; want 3", count, err)
	}
}
