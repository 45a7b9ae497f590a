package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
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
			evidence := a.roundTripEvidence(cmd.Context())
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

// roundTripEvidence quotes stored runs that show what fewer round trips buy
// (observe.RoundTripEvidence). It looks only into a store that exists, and says how to
// measure it when none does.
func (a *app) roundTripEvidence(ctx context.Context) []string {
	if !strings.Contains(a.resultsDB, "://") && !strings.Contains(a.resultsDB, "=") {
		if _, err := os.Stat(a.resultsDB); err != nil {
			return observe.RoundTripEvidence(ctx, nil)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	store, err := a.openStore(ctx)
	if err != nil {
		return observe.RoundTripEvidence(ctx, nil)
	}
	defer store.Close()
	return observe.RoundTripEvidence(ctx, store)
}
