package results_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/results/storetest"
	"github.com/dblat/dblat/internal/spec"
)

// oldLinks are links as runs stored them before their shape was run parameters, with the
// shape each must read back as.
var oldLinks = []struct {
	rtt  time.Duration
	link string // JSON; "" for none
	want shape
}{
	{time.Millisecond, `{"kind":"inline","rtt":1000000,"up":250000,"down":750000,"jitter":100000,"distribution":"normal","bandwidth_up":12500000,"bandwidth_down":12500000,"delay_connect":true}`,
		shape{Up: 250 * time.Microsecond, Down: 750 * time.Microsecond, Jitter: 100 * time.Microsecond, Distribution: "normal", Bandwidth: 12_500_000}},
	{3 * time.Millisecond, `{"kind":"inline","rtt":3000000,"up":1500000,"down":1500000,"jitter":200000,"distribution":"uniform","delay_connect":true}`,
		shape{Jitter: 200 * time.Microsecond}},
	{1001, `{"kind":"inline","rtt":1001,"up":500,"down":501,"delay_connect":true}`, shape{}}, // an odd RTT split evenly
	{0, "", shape{}},
}

// shape is the link's shape of a run's parameters.
type shape struct {
	Up, Down, Jitter time.Duration
	Distribution     string
	Bandwidth        int64
	Loss             float64
	Profile          string
}

func shapeOf(p spec.Params) shape {
	return shape{Up: p.Up, Down: p.Down, Jitter: p.Jitter, Distribution: p.Distribution, Bandwidth: p.Bandwidth, Loss: p.Loss, Profile: p.Profile}
}

// TestSQLiteUpgradeLinkShape: a store of schema 11 upgraded in place gives each run the
// link's shape its link column recorded: the jitter and its shape, the bandwidth, and the
// one-way delays only where they split the RTT otherwise than evenly.
func TestSQLiteUpgradeLinkShape(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	if err := results.CreateSQLiteAt(ctx, path, 11); err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for i, o := range oldLinks {
		link := "NULL"
		if o.link != "" {
			link = "'" + o.link + "'"
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO runs (uid, study, cell_key, status, started, ended,
			workload, scale, terminals, connections, duration_ns, warmup_ns, seed, think, rtt_ns, link,
			engine, target, managed, server_version, database_bytes, hostname, pid, client)
			VALUES ('%s', 'old', 'c%d', 'finished', '2024-01-01T00:00:0%d.000000001Z', '2024-01-01T00:05:00.000000000Z',
			'tpcc', 1, 4, 4, 60000000000, 7000000000, 1, 0, %d, %s, 'postgres', 'pg1', 1, '16', 0, 'oldhost', 4242,
			'{"hostname":"oldhost","pid":4242}')`, uuid.NewString(), i, i, int64(o.rtt), link))
	}
	execRaw(t, path, stmts...)
	s := storetest.Open(t, path)
	checkShapes(t, s)
}

// TestPostgresFillLinkShape: the same fill on PostgreSQL, run again on runs written with
// their shape's columns at the defaults.
func TestPostgresFillLinkShape(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t, backends[1].newStore(t))
	db := results.DBOf(s)
	for i, o := range oldLinks {
		r := storetest.FullRun(t, "old", fmt.Sprint("c", i), time.Date(2024, 1, 1, 0, 0, i, 1, time.UTC))
		r.Params.RTT, r.Link = o.rtt, nil
		if _, err := s.Begin(ctx, &r); err != nil {
			t.Fatal(err)
		}
		var link any
		if o.link != "" {
			link = o.link
		}
		if _, err := db.ExecContext(ctx, `UPDATE runs SET link = $1::jsonb, up_ns = 0, down_ns = 0, jitter_ns = 0,
			distribution = '', bandwidth = 0, loss = 0, profile = '' WHERE uid = $2`, link, r.UID); err != nil {
			t.Fatal(err)
		}
	}
	if err := results.FillLinkShape(ctx, s); err != nil {
		t.Fatal(err)
	}
	checkShapes(t, s)
}

func checkShapes(t *testing.T, s results.Store) {
	t.Helper()
	runs, err := s.List(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(oldLinks) {
		t.Fatalf("%d runs, want %d", len(runs), len(oldLinks))
	}
	for _, r := range runs {
		var i int
		_, _ = fmt.Sscanf(r.CellKey, "c%d", &i)
		if got := shapeOf(r.Params); got != oldLinks[i].want {
			t.Errorf("run of %s: shape %+v, want %+v", oldLinks[i].link, got, oldLinks[i].want)
		}
	}
}
