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

	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/managed"
)

// launcherFlags are the flags that choose how a managed server is run.
type launcherFlags struct {
	pgBin, mariadbBin, fbBin string
	runAs                    string
	downloadDir              string // set from the state directory
	warn                     func(string)
}

func (f *launcherFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.pgBin, "pg-bin", "", "directory of the PostgreSQL server binaries (default: pg_config --bindir, then /usr/lib/postgresql/*/bin)")
	cmd.Flags().StringVar(&f.mariadbBin, "mariadb-bin", "", "directory of mariadbd (default: PATH, then /usr/sbin)")
	cmd.Flags().StringVar(&f.fbBin, "fb-bin", "", "bin directory of a Firebird 3.0 installation (default: Debian's firebird3.0-server)")
	cmd.Flags().StringVar(&f.runAs, "run-as", "", "unprivileged user to run servers as when dblat runs as root (default: dblat, postgres or nobody)")
}

// managedEngines are the engines dblat can run as managed servers.
var managedEngines = []string{"firebird", "mariadb", "postgres"}

// canonicalEngine maps the names users write to engine names.
func canonicalEngine(name string) string {
	switch name {
	case "postgresql", "pg":
		return "postgres"
	case "mysql":
		return "mariadb"
	case "fb":
		return "firebird"
	}
	return name
}

func (f *launcherFlags) launcher(engineName string) (managed.Launcher, error) {
	switch canonicalEngine(engineName) {
	case "postgres":
		return postgres.Launcher{BinDir: f.pgBin, RunAs: f.runAs, DownloadDir: f.downloadDir}, nil
	case "mariadb":
		return mariadb.Launcher{BinDir: f.mariadbBin, RunAs: f.runAs, Warn: f.warn}, nil
	case "firebird":
		return firebird.Launcher{BinDir: f.fbBin, RunAs: f.runAs}, nil
	}
	return nil, usagef("dblat cannot manage %q servers (managed engines: %s); connect to your own with --target DSN",
		engineName, strings.Join(managedEngines, ", "))
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
		name     string
		sets     []string
		port     int
		pageSize int
		lf       launcherFlags
	)
	cmd := &cobra.Command{
		Use:   "start ENGINE --name NAME [--set key=value ...]",
		Short: "Create (if new) and start a managed server, then print its DSN",
		Long: `Creates (if new) and starts a private server of ENGINE (postgres, mariadb or firebird)
in the state directory, on a loopback port, and prints its DSN. Settings are checked before
the start (an unknown key is refused with a suggestion) and read back after it.

Firebird: --set ServerMode=Super|SuperClassic|Classic chooses the architecture, any other
firebird.conf key of 3.0 may be set, and --page-size sets the benchmark database's page size.`,
		Example: `  dblat server start postgres --name pg1
  dblat server start postgres --name pg1 --set shared_buffers=256MB --set synchronous_commit=off
  dblat server start mariadb --name m1 --set innodb_buffer_pool_size=1G
  dblat server start firebird --name fb-cs --set ServerMode=Classic --page-size 8192`,
		Args: exactArgs(1, "an ENGINE (postgres, mariadb or firebird)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := managed.CheckName(name); err != nil {
				return usageError{err}
			}
			settings, err := parseSets(sets)
			if err != nil {
				return err
			}
			if pageSize != 0 {
				if canonicalEngine(args[0]) != "firebird" {
					return usagef("--page-size is for firebird servers; for %s use --set", args[0])
				}
				if settings == nil {
					settings = map[string]string{}
				}
				settings[firebird.SettingPageSize] = fmt.Sprint(pageSize)
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
	cmd.Flags().IntVar(&pageSize, "page-size", 0, "Firebird: page size of the benchmark database (4096, 8192 or 16384)")
	lf.add(cmd)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// startServer creates or restarts the named instance and saves its record.
func (a *app) startServer(ctx context.Context, engineName, name string, port int, settings map[string]string, lf *launcherFlags) (*managed.Instance, error) {
	engineName = canonicalEngine(engineName)
	lf.warn = func(msg string) { a.info("warning: %s", msg) }
	lf.downloadDir = filepath.Join(a.registry().Root, "binaries", "postgres")
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
