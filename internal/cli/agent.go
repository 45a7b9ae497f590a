package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/agent"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

func (a *app) agentCommand() *cobra.Command {
	var (
		name, target string
		heartbeat    time.Duration
		idleExit     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "agent --results postgres://… [--name NAME]",
		Short: "Drive parts of runs that `dblat run … --agents N` hands out through the results store",
		Long: `Joins the results store as an agent and waits for work: a part of a run started elsewhere
with ` + "`dblat run … --agents N`" + ` (its terminals, for TPC-C its home warehouses, the run's latency
link, which the agent calibrates on its own path). It measures its clock's offset to the
store's, starts its terminals at the start time the coordinator announced, writes its part's
figures back to the store and waits for the next part. It heart-beats every second; a
coordinator fails the run when an agent's heartbeat stops for 5 s.

The results store must be one every agent and the coordinator reach: a PostgreSQL database
(a SQLite file serves agents on one machine). SIGTERM or Ctrl-C stops the agent: a part in
progress is drained and reported failed, and the agent leaves the store.`,
		Example: `  dblat agent --results postgres://bench@resultsdb/dblat --name east-1
  dblat agent --results postgres://bench@resultsdb/dblat --name east-2 --target 'postgres://bench@db:5432/tpcc'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				host, _ := os.Hostname()
				name = fmt.Sprintf("%s-%d", host, os.Getpid())
			}
			ctx, stop := a.interruptCancels(cmd.Context(), "stopping the agent (a part in progress is drained and reported failed)")
			defer stop()
			core, store, closeStore, err := a.core(ctx)
			if err != nil {
				return err
			}
			defer closeStore()
			ag := &agent.Agent{Name: name, Store: store, Core: core, Target: target, Heartbeat: heartbeat, IdleExit: idleExit}
			return ag.Serve(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the agent's name in the store and in failure reasons (default: HOST-PID); in Kubernetes, the completion index")
	f.StringVar(&target, "target", "", "connect to this target instead of the one the run names (a DSN with a password, which the store never holds)")
	f.DurationVar(&idleExit, "idle-exit", 0, "exit (status 0) after this long without a part, e.g. to let a Kubernetes Job complete (default 0: never)")
	f.DurationVar(&heartbeat, "heartbeat", agent.DefaultHeartbeat, "how often to tell the store the agent is alive")
	return cmd
}

// coordinate runs rs in parts on n agents, waiting up to wait for them (0: the default).
func (a *app) coordinate(ctx context.Context, drain <-chan struct{}, core *execution.Core, store agent.Store, rs spec.Run, n int, wait time.Duration) (*results.Run, error) {
	c := &agent.Coordinator{Store: store, Core: core, Agents: n, JoinWait: wait, Observer: core.Observer}
	return c.Run(ctx, drain, rs)
}
