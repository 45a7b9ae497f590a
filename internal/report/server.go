package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
)

// OperationRow is an operation dblat started during a run's window (results.Operation),
// with the run's figures before, during and after it.
type OperationRow struct {
	Run int64 `json:"run"`
	// Levels holds the run's level of each Report.Factors entry.
	Levels    []string          `json:"levels"`
	Operation results.Operation `json:"operation"`
	// Phases are the stretches of the window before, during and after the operation, those
	// that hold a sample interval.
	Phases []Phase `json:"phases"`
}

// Phase is a stretch of a run's window: its throughput and the typical response times of
// its sample intervals.
type Phase struct {
	// Name is "before", "during" or "after"; From and To bound it, in seconds into the
	// window, and Intervals counts the sample intervals whose middle lies in it.
	Name      string  `json:"name"`
	From      float64 `json:"from_s"`
	To        float64 `json:"to_s"`
	Intervals int     `json:"intervals"`
	// TPS is the transactions that ended in its intervals per second of them.
	TPS float64 `json:"tps"`
	// P50Ms and P99Ms are the medians, over its intervals, of each interval's median and
	// 99th percentile of the service time, in ms: the typical second's.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// operations lists the operations the runs started during their windows, by run.
func (r *Report) operations(runs []results.Run) []OperationRow {
	var out []OperationRow
	for i := range runs {
		run := &runs[i]
		for _, o := range run.Operations {
			out = append(out, OperationRow{Run: run.ID, Levels: r.levelsOf(run), Operation: o, Phases: phases(run, &o)})
		}
	}
	slices.SortStableFunc(out, func(a, b OperationRow) int { return int(a.Run - b.Run) })
	return out
}

// phases splits r's window at operation o's start and end and sums up each part, from
// the samples of all types.
func phases(r *results.Run, o *results.Operation) []Phase {
	if !o.Ran() {
		return nil
	}
	end := r.Summary.Elapsed
	bounds := []struct {
		name     string
		from, to time.Duration
	}{{"before", 0, o.Started}, {"during", o.Started, min(o.Ended, end)}, {"after", min(o.Ended, end), end}}
	pct := map[time.Duration]results.Sample{}
	for _, s := range r.Samples {
		if s.Type == "" {
			pct[s.Offset] = s
		}
	}
	var out []Phase
	for _, b := range bounds {
		ph := Phase{Name: b.name, From: round(b.from.Seconds(), 1), To: round(b.to.Seconds(), 1)}
		var count, secs float64
		var p50, p99 []float64
		for _, iv := range disturb.WindowIntervals(r) {
			if mid := (max(iv.From, 0) + iv.To) / 2; mid < b.from || mid >= b.to {
				continue
			}
			ph.Intervals++
			count += iv.Count
			secs += (iv.To - iv.From).Seconds()
			if s := pct[iv.To]; s.Committed+s.Errors > 0 {
				p50 = append(p50, float64(s.P50Us)/1000)
				p99 = append(p99, float64(s.P99Us)/1000)
			}
		}
		if ph.Intervals == 0 {
			continue
		}
		ph.TPS = round(count/secs, 1)
		ph.P50Ms, ph.P99Ms = round(medianOf(p50), 2), round(medianOf(p99), 2)
		out = append(out, ph)
	}
	return out
}

// phaseNames are the phases of a window around an operation, in order.
var phaseNames = []string{"before", "during", "after"}

// phaseCells writes a row's phases as table cells, three per phase of phaseNames (tx/s,
// p50 ms, p99 ms), "–" for a phase without intervals.
func phaseCells(ps []Phase) []string {
	var out []string
	for _, name := range phaseNames {
		i := slices.IndexFunc(ps, func(p Phase) bool { return p.Name == name })
		if i < 0 {
			out = append(out, "–", "–", "–")
			continue
		}
		p := ps[i]
		out = append(out, fmt.Sprintf("%.1f", p.TPS), fmt.Sprintf("%.2f", p.P50Ms), fmt.Sprintf("%.2f", p.P99Ms))
	}
	return out
}

// medianOf is the median of xs (sorted in place), 0 for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// CellCache is what the server's cache did in a cell's finished runs, and the memory it
// had: means over the runs that recorded each figure.
type CellCache struct {
	// MemoryLimit is the memory limit the server ran under, read back from its cgroup, in
	// bytes (results.Server.MemoryLimit); 0 for the machine's memory.
	MemoryLimit int64 `json:"memory_limit,omitempty"`
	// HitRatio is the share of the pages the server looked up that its own cache held
	// (engine.IO); ReadsPerTx the pages it read from outside it per transaction, both from
	// its own counters; 0 with Runs 0 when the engine counts none.
	HitRatio   float64 `json:"hit_ratio"`
	ReadsPerTx float64 `json:"reads_per_tx"`
	Runs       int     `json:"runs"`
	// DiskKiBPerTx is what the server's processes read from the storage layer per
	// transaction, in KiB (the managed server's read_bytes): what neither its cache nor the
	// machine's page cache served; DiskRuns counts the runs that recorded it.
	DiskKiBPerTx float64 `json:"disk_kib_per_tx"`
	DiskRuns     int     `json:"disk_runs"`
}

// statReadBytes is the statistic of what a managed server read from the storage layer
// (execution.StatReadBytes).
const statReadBytes = "server.read_bytes"

// cellCache sums up the cache figures of a cell's finished runs; nil when none has any.
func cellCache(runs []*results.Run) *CellCache {
	var c CellCache
	var hit, reads, disk float64
	for _, r := range runs {
		c.MemoryLimit = max(c.MemoryLimit, r.Server.MemoryLimit)
		if r.StatsBefore == nil || r.StatsAfter == nil {
			continue
		}
		delta := engine.Stats(r.StatsAfter).Delta(r.StatsBefore)
		e, err := engine.Lookup(r.Server.Engine)
		if err != nil {
			continue
		}
		cmp := engine.Caps(e).Comparer
		if cmp == nil || cmp.Comparison().IO == nil {
			continue
		}
		io, ok := cmp.Comparison().IO(delta)
		if !ok || io.Transactions <= 0 || io.Lookups <= 0 {
			continue
		}
		c.Runs++
		hit += 1 - io.Reads/io.Lookups
		reads += io.Reads / io.Transactions
		if b, ok := delta[statReadBytes]; ok {
			c.DiskRuns++
			disk += b / 1024 / io.Transactions
		}
	}
	if c.Runs == 0 && c.MemoryLimit == 0 {
		return nil
	}
	if c.Runs > 0 {
		c.HitRatio, c.ReadsPerTx = round(hit/float64(c.Runs), 4), round(reads/float64(c.Runs), 2)
	}
	if c.DiskRuns > 0 {
		c.DiskKiBPerTx = round(disk/float64(c.DiskRuns), 1)
	}
	return &c
}

// Cached reports whether any cell has cache figures, which the cells' table then shows.
func (r *Report) Cached() bool {
	return slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Cache != nil })
}

// Text writes the cache figures in one cell of a table: "512 MiB, hit 97.1 %, 3.2 reads/tx,
// 41.0 KiB/tx from disk".
func (c *CellCache) Text() string {
	if c == nil {
		return "–"
	}
	mem := "machine's memory"
	if c.MemoryLimit > 0 {
		mem = engine.FormatBytes(float64(c.MemoryLimit))
	}
	if c.Runs == 0 {
		return mem
	}
	s := fmt.Sprintf("%s, hit %.1f %%, %.2f reads/tx", mem, 100*c.HitRatio, c.ReadsPerTx)
	if c.DiskRuns > 0 {
		s += fmt.Sprintf(", %.1f KiB/tx from disk", c.DiskKiBPerTx)
	}
	return s
}
