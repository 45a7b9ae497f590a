package results

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// ExportFormats are the formats Export accepts.
var ExportFormats = []string{"json", "csv"}

// csvHeader is the header row of the CSV export.
var csvHeader = append([]string{
	"id", "study", "cell_key", "status", "reason", "started",
	"engine", "server_version", "workload", "scale", "terminals", "connections",
	"duration_s", "warmup_s", "rtt_ms",
	"tx_type", "committed", "rollbacks", "errors", "tps", "tpm", "nopm",
	"p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms",
	"rate", "achieved_rate", "skipped", "overload", "retries",
	"resp_p50_ms", "resp_p90_ms", "resp_p99_ms", "lag_p99_ms",
	"path", "mode", "max_tries", "options",
}, append(csvLinkKeys, "during", "memory_limit_mb")...)

// csvLinkKeys are the link's fields beyond its RTT (spec.LinkKeys), columns of the CSV
// export after csvHeader's, each as a study file writes it.
var csvLinkKeys = slices.DeleteFunc(spec.LinkKeys(), func(k string) bool { return k == FactorRTT })

// CSVAllTypes is the tx_type of the run-wide row of the CSV export.
const CSVAllTypes = "all"

// Export writes runs to w in format:
//
//   - "json": an indented JSON array of the runs in full (every field of Run, including
//     histograms and whatever Samples the runs carry); an empty list is "[]".
//   - "csv": a header row, then for each run one run-wide row (tx_type "all": the Summary
//     figures, latency columns empty) followed by one row per TxSummary (its committed,
//     rollbacks, errors, its own tps/tpm = (committed+rollbacks) over the run's elapsed
//     time as the runner counts them, nopm empty, and its latencies in ms: service time
//     p50_ms … max_ms, response time resp_…, schedule lag lag_p99_ms). rate (0 for a
//     closed-loop run) is on every row, retries on every row, the open-loop figures
//     (achieved_rate, skipped, overload) on the run-wide row; path (direct, link or
//     unix), mode, max_tries and every option ("k=v;k=v") on every row, and the link's
//     shape beyond its RTT (up, down, jitter, distribution, bandwidth, loss, profile: each
//     as a study file writes it, "500µs", "100mbit", "0.1%"), the operation during its
//     window (during: "backup@30s", or none) and the memory limit its server ran under
//     (memory_limit_mb, empty for none). Times are RFC 3339 UTC, durations in the unit
//     the column names.
//
// Any other format is an error naming the valid ones. Export only formats; it does not
// touch a Store.
func Export(w io.Writer, runs []Run, format string) error {
	switch format {
	case "json":
		if runs == nil {
			runs = []Run{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(runs); err != nil {
			return fmt.Errorf("results: export json: %w", err)
		}
		return nil
	case "csv":
		return exportCSV(w, runs)
	}
	return fmt.Errorf("results: unknown export format %q (valid: %s)", format, strings.Join(ExportFormats, ", "))
}

func exportCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("results: export csv: %w", err)
	}
	for _, r := range runs {
		run := []string{
			strconv.FormatInt(r.ID, 10), r.Study, r.CellKey, string(r.Status), r.Reason,
			r.Started.UTC().Format(time.RFC3339Nano),
			r.Server.Engine, r.Server.Version, r.Params.Workload,
			strconv.Itoa(r.Params.Scale), strconv.Itoa(r.Params.Terminals),
			strconv.Itoa(r.Params.Connections),
			num(r.Params.Duration.Seconds()), num(r.Params.Warmup.Seconds()),
			num(float64(r.Params.RTT) / float64(time.Millisecond)),
		}
		// What tells runs with the same sizes apart: the path to the server (a direct
		// run and one through the link at RTT 0 both have rtt_ms 0), the mode, retries and
		// every option as stored.
		tail := []string{spec.PathOf(&r.Params, r.Link != nil), r.Params.Options[spec.OptionMode],
			strconv.Itoa(r.Params.Tries()), optionsText(r.Params.Options)}
		for _, key := range append(csvLinkKeys, "during") {
			f, _ := spec.Lookup(key)
			tail = append(tail, f.Value(&r.Params))
		}
		mem := ""
		if r.Server.MemoryLimit > 0 {
			mem = num(float64(r.Server.MemoryLimit) / (1 << 20))
		}
		tail = append(tail, mem)
		row := append(run[:len(run):len(run)],
			CSVAllTypes, int64s(r.Summary.Committed), int64s(r.Summary.Rollbacks),
			int64s(sum(r.Summary.Errors)),
			num(r.Summary.TPS), num(r.Summary.TPM), num(r.Summary.NOPM),
			"", "", "", "", "", "",
			num(r.Params.Rate), num(r.Summary.AchievedRate), int64s(r.Summary.Skipped),
			strconv.FormatBool(r.Summary.Overload), int64s(r.Summary.Retries),
			"", "", "", "")
		row = append(row, tail...)
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("results: export csv: %w", err)
		}
		secs := r.Summary.Elapsed.Seconds()
		for _, t := range r.Tx {
			tps, tpm := "", ""
			if secs > 0 {
				done := float64(t.Committed + t.Rollbacks) // as the runner counts TPS
				tps, tpm = num(done/secs), num(done/secs*60)
			}
			row := append(run[:len(run):len(run)],
				t.Type, int64s(t.Committed), int64s(t.Rollbacks), int64s(sum(t.Errors)),
				tps, tpm, "",
				ms(t.P50Us), ms(t.P90Us), ms(t.P95Us), ms(t.P99Us), ms(t.P999Us), ms(t.MaxUs),
				num(r.Params.Rate), "", "", "", int64s(t.Retries),
				ms(t.RespP50Us), ms(t.RespP90Us), ms(t.RespP99Us), ms(t.LagP99Us))
			row = append(row, tail...)
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("results: export csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("results: export csv: %w", err)
	}
	return nil
}

// optionsText writes options as "k=v;k=v", sorted by name.
func optionsText(opts map[string]string) string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + opts[k]
	}
	return strings.Join(parts, ";")
}

func num(f float64) string  { return strconv.FormatFloat(f, 'f', -1, 64) }
func int64s(n int64) string { return strconv.FormatInt(n, 10) }
func ms(us int64) string    { return num(float64(us) / 1000) }
func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}
