package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

func (a *app) predictCommand() *cobra.Command {
	var (
		observed, format string
		rtts             []string
		clients          int
	)
	cmd := &cobra.Command{
		Use:   "predict --observed FILE|RUN --rtt D[,D...] [--clients N] [--format text|json]",
		Short: "Predict what a farther database would cost an application observed through dblat proxy",
		Long: `Reads an observation (the file dblat proxy --observe wrote, or the run it stored) and
predicts, at each added round-trip time, the application's mean response time per
transaction shape and overall, and its throughput with N clients in a closed loop (by
default as many as were observed); the RTT at which throughput falls by 10 % and by half;
the shapes that lose most; and what would help them.

The model: each transaction takes the time it took in the observation plus its round trips
times the RTT added beyond the observation's; each client waits the observed time between its
transactions. Where the observation found that a shape's transactions run one at a time
from some round trip to their end (a lock they all take, a hot row), that section is a
queue whose holding time grows by one RTT per round trip it spans, solved by mean-value
analysis (the rest of a lock's holding time counted as nearly constant once added RTT makes
up most of it), and the output says so. Where waits were seen that it could not place,
it says the predicted throughput is an upper bound.

--format json prints one object per RTT with at least rtt_ns, clients, tps, latency_ms and
per shape shape, count, round_trips and latency_ms.`,
		Example: `  dblat proxy --upstream 127.0.0.1:5432 --listen 127.0.0.1:6543 --rtt 0 --observe app.json
  dblat predict --observed app.json --rtt 5ms,20ms
  dblat predict --observed 42 --rtt 20ms --clients 50 --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if observed == "" {
				return usagef("--observed is required: the file dblat proxy --observe wrote, or the id of the run it stored")
			}
			if len(rtts) == 0 {
				return usagef("--rtt: give at least one added RTT, e.g. --rtt 20ms")
			}
			var levels []time.Duration
			for _, s := range rtts {
				d, err := parseRTT(s)
				if err != nil {
					return err
				}
				levels = append(levels, d)
			}
			if format != "text" && format != "json" {
				return usagef("--format %q: use text or json", format)
			}
			if cmd.Flags().Changed("clients") && clients < 1 {
				return usagef("--clients %d: a closed loop needs at least 1 client (leave it out for the observed number)", clients)
			}
			o, err := a.readObservation(cmd.Context(), observed)
			if err != nil {
				return err
			}
			evidence := a.tpccModeEvidence(cmd.Context())
			enc := json.NewEncoder(a.st.Stdout)
			for i, rtt := range levels {
				f, err := observe.Predict(o, rtt, clients)
				if err != nil {
					return usageError{err}
				}
				f.Evidence = evidence
				if format == "json" {
					if err := enc.Encode(f); err != nil {
						return err
					}
					continue
				}
				if i > 0 {
					a.printf("\n")
				}
				if err := f.WriteText(a.st.Stdout); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&observed, "observed", "", "the observation: a file written by dblat proxy --observe, or a stored run's id (required)")
	cmd.Flags().StringSliceVar(&rtts, "rtt", nil, "added round-trip times to predict, comma-separated (e.g. 5ms,20ms)")
	cmd.Flags().IntVar(&clients, "clients", 0, "clients in the closed loop (default: as many as were observed)")
	cmd.Flags().StringVar(&format, "format", "text", "text, or json: one object per RTT")
	return cmd
}

// readObservation reads an observation from a file, or from the run of that id.
func (a *app) readObservation(ctx context.Context, ref string) (*observe.Observation, error) {
	o, err := observe.ReadFile(ref)
	if err == nil {
		return o, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, usageError{err}
	}
	id, perr := results.ParseID(ref)
	if perr != nil {
		return nil, usagef("--observed %s: no such file, and not a run id (see dblat results list)", ref)
	}
	store, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	r, err := store.Get(ctx, id, false)
	if err != nil {
		return nil, err
	}
	o, err = observe.FromRun(r)
	if err != nil {
		return nil, usageError{err}
	}
	return o, nil
}

// tpccModeEvidence quotes stored TPC-C runs that differ only in their round-trip mode
// (client, batched, procedure): what fewer round trips bought at the same RTT and
// terminals. It looks only into a store that exists, and says how to measure it when none
// does.
func (a *app) tpccModeEvidence(ctx context.Context) []string {
	how := []string{"dblat's TPC-C runs New-Order in 37, 2 or 1 round trips (dblat run tpcc --rtt 20ms --mode client|batched|procedure): compare them to see what fewer round trips buy on your server"}
	if !strings.Contains(a.resultsDB, "://") && !strings.Contains(a.resultsDB, "=") {
		if _, err := os.Stat(a.resultsDB); err != nil {
			return how
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	store, err := a.openStore(ctx)
	if err != nil {
		return how
	}
	defer store.Close()
	runs, err := store.List(ctx, results.Filter{Status: results.StatusFinished, Limit: 2000})
	if err != nil {
		return how
	}
	type key struct {
		rtt       time.Duration
		terminals int
		engine    string
	}
	groups := map[key]map[string]results.Run{}
	for _, r := range runs {
		mode := r.Params.Options["mode"]
		if r.Params.Workload != "tpcc" || mode == "" || r.Params.RTT <= 0 || r.Summary.NOPM <= 0 {
			continue
		}
		k := key{r.Params.RTT, r.Params.Terminals, r.Server.Engine}
		if groups[k] == nil {
			groups[k] = map[string]results.Run{}
		}
		if _, ok := groups[k][mode]; !ok { // the newest (List is newest first)
			groups[k][mode] = r
		}
	}
	var keys []key
	for k, g := range groups {
		if len(g) >= 2 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return how
	}
	slices.SortFunc(keys, func(x, y key) int { return cmp.Compare(y.rtt, x.rtt) })
	var out []string
	for _, k := range keys[:min(2, len(keys))] {
		var parts []string
		for _, m := range []string{"client", "batched", "procedure"} {
			r, ok := groups[k][m]
			if !ok {
				continue
			}
			rt := ""
			for _, t := range r.Tx {
				if t.Type == "new_order" && t.RoundTrips > 0 {
					rt = fmt.Sprintf(", New-Order in %.0f round trips", t.RoundTrips)
				}
			}
			parts = append(parts, fmt.Sprintf("%s %.0f NOPM (run %d%s)", m, r.Summary.NOPM, r.ID, rt))
		}
		out = append(out, fmt.Sprintf("stored TPC-C runs on %s at %s added RTT, %s: %s", k.engine, fmtRTT(k.rtt),
			words.Count(k.terminals, "terminal"), strings.Join(parts, "; ")))
	}
	return out
}
