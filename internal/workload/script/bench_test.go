package script

import (
	"context"
	"testing"
)

// tpcbScript is pgbench's built-in tpcb-like script (PostgreSQL 15).
const tpcbScript = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`

// BenchmarkTPCB interprets the tpcb-like transaction with an executor that does nothing:
// the client-side cost of the language per transaction (see allocs/op).
func BenchmarkTPCB(b *testing.B) {
	s, err := Parse("tpcb.sql", []byte(tpcbScript))
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		name string
		mode Mode
	}{{"literal", Literal}, {"params", Params}} {
		b.Run(m.name, func(b *testing.B) {
			c, err := NewClient(Config{Scale: 10, Seed: 1, Mode: m.mode})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				c.Begin(s)
				if err := c.Run(ctx, nopExecutor{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParse parses the tpcb-like script: the cost of lexing its SQL and its
// meta-commands, paid once per script.
func BenchmarkParse(b *testing.B) {
	src := []byte(tpcbScript)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("tpcb.sql", src); err != nil {
			b.Fatal(err)
		}
	}
}
