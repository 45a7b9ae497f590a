package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/managed"
)

// launcherFlags are the flags that choose how a managed server is run.
type launcherFlags struct {
	pgBin       string
	runAs       string
	downloadDir string // set from the state directory
}

func (f *launcherFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.pgBin, "pg-bin", "", "directory of the PostgreSQL server binaries (default: pg_config --bindir, then /usr/lib/postgresql/*/bin)")
	cmd.Flags().StringVar(&f.runAs, "run-as", "", "unprivileged user to run servers as when dblat runs as root (default: dblat, postgres or nobody)")
}

func (f *launcherFlags) launcher(engineName string) (managed.Launcher, error) {
	switch engineName {
	case "postgres", "postgresql":
		return postgres.Launcher{BinDir: f.pgBin, RunAs: f.runAs, DownloadDir: f.downloadDir}, nil
	}
	return nil, usagef("dblat cannot manage %q servers yet (managed engines: postgres); connect to your own with --target DSN", engineName)
}

func (a *app) serverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start, stop and list managed database servers",
		Long: `Managed servers are private instances that dblat creates in its state directory
(--state, default ./.dblat), listening on a loopback port only, and stops by PID.`,
	}
	cmd.AddCommand(a.serverStartCommand(), a.serverStopCommand(), a.serverListCommand())
	return cmd
}

func (a *app) serverStartCommand() *cobra.Command {
	var (
		name string
		sets []string
		port int
		lf   launcherFlags
	)
	cmd := &cobra.Command{
		Use:   "start ENGINE --name NAME [--set key=value ...]",
		Short: "Create (if new) and start a managed server, then print its DSN",
		Example: `  dblat server start postgres --name pg1
  dblat server start postgres --name pg1 --set shared_buffers=256MB --set synchronous_commit=off`,
		Args: exactArgs(1, "an ENGINE (postgres)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := managed.CheckName(name); err != nil {
				return usageError{err}
			}
			settings, err := parseSets(sets)
			if err != nil {
				return err
			}
			inst, err := a.startServer(cmd.Context(), args[0], name, port, settings, &lf)
			if err != nil {
				return err
			}
			a.printf("%s\n", inst.DSN)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name of the server (required)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "server setting key=value (repeatable); replaces the settings of an earlier start")
	cmd.Flags().IntVar(&port, "port", 0, "loopback port (default: a free one, kept across restarts)")
	lf.add(cmd)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// startServer creates or restarts the named instance and saves its record.
func (a *app) startServer(ctx context.Context, engineName, name string, port int, settings map[string]string, lf *launcherFlags) (*managed.Instance, error) {
	if engineName == "postgresql" {
		engineName = "postgres"
	}
	lf.downloadDir = filepath.Join(a.stateDir, "binaries", "postgres")
	l, err := lf.launcher(engineName)
	if err != nil {
		return nil, err
	}
	if err := a.mkdirState(); err != nil {
		return nil, err
	}
	reg := a.registry()
	inst, err := reg.Load(name)
	switch {
	case errors.Is(err, managed.ErrNoInstance):
		inst = &managed.Instance{Name: name, Engine: engineName, Dir: reg.Dir(name)}
		if err := os.MkdirAll(inst.Dir, 0o755); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case inst.Engine != engineName:
		return nil, usagef("server %q is a %s server, not %s", name, inst.Engine, engineName)
	case inst.PID != 0:
		if settings != nil || (port != 0 && port != inst.Port) {
			return nil, usagef("server %q is running (PID %d): stop it first to change its settings", name, inst.PID)
		}
		a.info("server %s is already running (PID %d)", name, inst.PID)
		return inst, nil
	}
	if settings != nil {
		inst.Settings = settings
	}
	if port != 0 {
		inst.Port = port
	}
	a.info("starting %s server %s in %s ...", engineName, name, inst.Dir)
	if err := l.Start(ctx, inst); err != nil {
		return nil, fmt.Errorf("server %s: %w", name, err)
	}
	if err := reg.Save(inst); err != nil {
		_ = l.Stop(ctx, inst)
		return nil, err
	}
	a.info("server %s is up on 127.0.0.1:%d (PID %d)", name, inst.Port, inst.PID)
	return inst, nil
}

// parseSets turns repeated key=value flags into a map; nil when none were given.
func parseSets(sets []string) (map[string]string, error) {
	if len(sets) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(sets))
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("--set %q: write it as key=value", s)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m, nil
}

func (a *app) serverStopCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "stop NAME... | --all",
		Short: "Stop managed servers (their data is kept)",
		RunE: func(cmd *cobra.Command, args []string) error {
			reg := a.registry()
			if all {
				list, err := reg.List()
				if err != nil {
					return err
				}
				args = args[:0]
				for _, inst := range list {
					args = append(args, inst.Name)
				}
			} else if len(args) == 0 {
				return usagef("name the servers to stop, or use --all")
			}
			var errs []error
			for _, name := range args {
				if err := a.stopServer(cmd.Context(), name); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "stop every managed server")
	return cmd
}

func (a *app) stopServer(ctx context.Context, name string) error {
	reg := a.registry()
	inst, err := reg.Load(name)
	if err != nil {
		return err
	}
	if inst.PID == 0 {
		a.info("server %s is not running", name)
		return nil
	}
	var lf launcherFlags
	l, err := lf.launcher(inst.Engine)
	if err != nil {
		return err
	}
	pid := inst.PID
	if err := l.Stop(ctx, inst); err != nil {
		return fmt.Errorf("stop server %s: %w", name, err)
	}
	a.info("server %s stopped (PID %d)", name, pid)
	return reg.Save(inst)
}

func (a *app) serverListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List managed servers and whether they run",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			list, err := a.registry().List()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(a.st.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tENGINE\tSTATE\tPID\tPORT\tDSN")
			for _, inst := range list {
				state, pid := "stopped", "-"
				if inst.PID != 0 {
					state, pid = "running", fmt.Sprint(inst.PID)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", inst.Name, inst.Engine, state, pid, inst.Port, inst.DSN)
			}
			return tw.Flush()
		},
	}
}
