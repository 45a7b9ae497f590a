package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/words"
)

// launcherFlags are the flags that choose how a managed server is run.
type launcherFlags struct {
	binDir string
	// Per-engine spellings of --bin-dir, kept for scripts written before it.
	pgBin, mariadbBin, fbBin string
	runAs                    string
}

func (f *launcherFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.binDir, "bin-dir", "", "directory of the server's binaries (default: the engine's own search: the OS packages' locations; PostgreSQL downloads binaries when none are installed)")
	fl.StringVar(&f.pgBin, "pg-bin", "", "PostgreSQL's --bin-dir")
	fl.StringVar(&f.mariadbBin, "mariadb-bin", "", "MariaDB's --bin-dir")
	fl.StringVar(&f.fbBin, "fb-bin", "", "Firebird's --bin-dir")
	for _, n := range []string{"pg-bin", "mariadb-bin", "fb-bin"} {
		_ = fl.MarkHidden(n)
	}
	fl.StringVar(&f.runAs, "run-as", "", "unprivileged user to run servers as when dblat runs as root (default: dblat, postgres or nobody)")
}

// apply makes the app start servers of engineName as the flags say.
func (f *launcherFlags) apply(a *app, e engine.Engine) {
	a.runAs = f.runAs
	dir := f.binDir
	for flag, v := range map[string]string{"pg-bin": f.pgBin, "mariadb-bin": f.mariadbBin, "fb-bin": f.fbBin} {
		if v != "" && dir == "" {
			if other, err := engine.Lookup(strings.TrimSuffix(flag, "-bin")); err == nil && other.Name() == e.Name() {
				dir = v
			}
		}
	}
	if dir != "" {
		a.binDirs = map[string]string{e.Name(): dir}
	}
}

func (a *app) serverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Start, stop and list managed database servers",
		Long: `Managed servers are private instances that dblat creates in its state directory
(--state, default ./.dblat), listening on a loopback port only, and stops by PID. Each lets
in only the user who started it: its passwords are generated when it is made and kept in
STATE/servers/NAME/credentials/ (mode 0700), which its DSN names instead of holding them.`,
	}
	cmd.AddCommand(a.serverStartCommand(), a.serverStopCommand(), a.serverListCommand(), a.serverInstallCommand(),
		a.serverTemplatesCommand(), a.serverRemoveCommand())
	return cmd
}

func (a *app) serverTemplatesCommand() *cobra.Command {
	var remove []string
	var all bool
	cmd := &cobra.Command{
		Use:   "templates [--remove KEY ... | --remove-all]",
		Short: "List or remove the loaded databases kept as templates for later studies",
		Long: `A study's first load of a data set on a managed server is kept in the state directory
as a template (Firebird: a copy of the database file; MariaDB: its tables' tablespaces;
PostgreSQL: a template database on that server), keyed by what determines its content:
the engine, its version, the page size and other storage settings, the workload's data
set, its scale and its seed. A later study that needs the same data on a server of the
same kind restores the template instead of loading again. A change of any of them is
another template. Removing a PostgreSQL template forgets it; its template database stays
in its server (DROP DATABASE dblat_template_… there to free the space).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			core := a.servers()
			if all {
				list, err := core.Templates()
				if err != nil {
					return err
				}
				for _, tp := range list {
					remove = append(remove, tp.Key)
				}
			}
			if len(remove) > 0 {
				for _, key := range remove {
					if err := core.RemoveTemplate(key); err != nil {
						return err
					}
					a.printf("removed template %s\n", key)
				}
				return nil
			}
			list, err := core.Templates()
			if err != nil {
				return err
			}
			if len(list) == 0 {
				a.printf("no templates in %s\n", core.Servers.Root)
				return nil
			}
			tw := words.Columns(a.st.Stdout)
			fmt.Fprintln(tw, "KEY\tENGINE\tDATA\tSCALE\tSIZE\tFROM\tCREATED\tSTORAGE")
			for _, tp := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tp.Key, tp.Fields["engine"], tp.Fields["dataset"], tp.Fields["scale"],
					engine.FormatBytes(float64(tp.Bytes)), tp.Source, tp.Created.Local().Format("2006-01-02 15:04"), engineFields(tp.Fields))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringSliceVar(&remove, "remove", nil, "remove the template with this KEY (repeatable)")
	cmd.Flags().BoolVar(&all, "remove-all", false, "remove every template")
	return cmd
}

// engineFields writes a template's engine fields: "PageSize=8192 version=3.0.11".
func engineFields(fields map[string]string) string {
	var parts []string
	for _, k := range sortedStrings(fields) {
		if name, ok := strings.CutPrefix(k, "engine."); ok {
			parts = append(parts, name+"="+fields[k])
		}
	}
	return strings.Join(parts, " ")
}

func sortedStrings(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (a *app) serverStartCommand() *cobra.Command {
	var (
		name             string
		sets             []string
		port             int
		install, version string
		storage          string
		memory           string
		encryption       string
		lf               launcherFlags
	)
	cmd := &cobra.Command{
		Use:   "start ENGINE --name NAME [--set key=value ...]",
		Short: "Create (if new) and start a managed server, then print its DSN",
		Long: `Creates (if new) and starts a private server of ENGINE (postgres, mariadb or firebird)
in the state directory, on a loopback port, and prints its DSN. Settings are checked before
the start (an unknown key is refused with a suggestion) and read back after it.

The server lets in only clients that log in with the passwords generated when it was made,
over TCP and (PostgreSQL, MariaDB) through its Unix socket. They stay in
STATE/servers/NAME/credentials/, readable by you only; the DSN names the file a client
reads (PostgreSQL passfile=, MariaDB option_file=, Firebird password_file=), and the line on
stderr connects the engine's own client with it (psql, mariadb --defaults-extra-file,
isql-fb -fetch_password). A server made by an earlier dblat, without credentials, gets them
at this start.

--install DIR runs the server from an installation of your own instead of the OS
packages' (a PostgreSQL bin directory or the directory above it, a MariaDB tarball's base
directory, a Firebird home with bin/firebird and plugins/ as Firebird's Linux tarballs
unpack). --version V runs version V: PostgreSQL 13-18 are fetched into the state
directory on first use (see server install). A server keeps the installation or version
it was created with; give another one another --name.

--storage memory keeps a new server's data directory in memory (a tmpfs, /dev/shm): no
write reaches the disk, so that a study of the network is not disturbed by the host's disk
stalls, which on a shared cloud machine come every few seconds; durability is then not
measured, and the data is lost when the machine restarts. A server keeps the storage it was
created with; ` + "`server remove`" + ` frees its memory.

--memory SIZE runs the server in a memory cgroup of its own limited to SIZE (512MB, 2GB):
its processes and the page cache of what it reads count against it, so that a database
larger than memory is a few GB on any machine (seed 001's small, medium and large
databases). A cache setting larger than the limit is refused. --memory none lifts the
limit; without --memory a restart keeps the last one. It needs root (or a delegated
cgroup) and cgroup v2's memory controller or cgroup v1's memory hierarchy.

--encryption on makes a new server that keeps its data encrypted at rest, where its
engine has that: MariaDB's InnoDB tablespaces and redo log, with the file_key_management
plugin and a key dblat generates in the server's directory (keys/keyfile, mode 0600). An
engine without it is refused with the reason (PostgreSQL's community server has none;
Debian's Firebird 3 ships no database crypt plugin). A server keeps what it was created
with.

Firebird: --set ServerMode=Super|SuperClassic|Classic chooses the architecture, any other
firebird.conf key of the server's version may be set, and --set PageSize=N the benchmark
database's page size.`,
		Example: `  dblat server start postgres --name pg1
  dblat server start postgres --name pg1 --set shared_buffers=256MB --set synchronous_commit=off
  dblat server start postgres --name pg13 --version 13
  dblat server start postgres --name pgmem --storage memory
  dblat server start postgres --name pg512 --memory 512MB
  dblat server start mariadb --name m1 --set innodb_buffer_pool_size=1G
  dblat server start mariadb --name menc --encryption on
  dblat server start mariadb --name m114 --install /opt/mariadb-11.4.5-linux-systemd-x86_64
  dblat server start firebird --name fb-cs --set ServerMode=Classic --set PageSize=8192
  dblat server start firebird --name fb5 --install /opt/firebird5`,
		Args:              exactArgs(1, "an ENGINE ("+strings.Join(engine.Managed(), ", ")+")"),
		ValidArgsFunction: completeManagedEngines,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := managed.CheckName(name); err != nil {
				return usageError{err}
			}
			settings, err := parseSets(sets)
			if err != nil {
				return err
			}
			e, err := engine.Lookup(args[0])
			if err != nil {
				return usageError{err}
			}
			if storage != "" {
				if storage, err = storageOption.Canonical(storage); err != nil {
					return usagef("--storage %v", err)
				}
			}
			lf.apply(a, e)
			if encryption != "" {
				if encryption, err = encryptionOption.Canonical(encryption); err != nil {
					return usagef("--encryption %v", err)
				}
			}
			inst, err := a.servers().Start(cmd.Context(), execution.ServerStart{Engine: e.Name(), Name: name, Port: port,
				Settings: settings, Install: install, Version: version, Storage: storage, Memory: memory, Encryption: encryption})
			if err != nil {
				return err
			}
			a.printf("%s\n", inst.DSN)
			if inst.Client != "" {
				a.info("connect a client with: %s", inst.Client)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name of the server (required)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "server setting key=value (repeatable); replaces the settings of an earlier start")
	cmd.Flags().IntVar(&port, "port", 0, "loopback port (default: a free one, kept across restarts)")
	cmd.Flags().StringVar(&install, "install", "", "run the server from this installation directory (default: the OS packages')")
	cmd.Flags().StringVar(&version, "version", "", "run this version of the server (PostgreSQL 13-18, fetched on first use)")
	cmd.Flags().StringVar(&storage, "storage", "", storageOption.Usage+" (default: disk for a new server, the one it was created with for an existing one)")
	cmd.Flags().StringVar(&memory, "memory", "", memoryOption.Usage+" (default: the limit of its last start)")
	cmd.Flags().StringVar(&encryption, "encryption", "", encryptionOption.Usage+" (default: off for a new server, what it was created with for an existing one)")
	declared(cmd.Flags(), "storage", storageOption)
	declared(cmd.Flags(), "memory", memoryOption)
	declared(cmd.Flags(), "encryption", encryptionOption)
	lf.add(cmd)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// storageOption declares --storage: where a new server keeps its data.
var storageOption = option.Option{Name: "storage", Kind: option.String, Values: managed.Storages,
	Usage: "where a new server keeps its data: disk, or memory (a tmpfs: no disk stalls, no durability measured)"}

// memoryOption declares --memory: the memory limit a server runs under (a study's
// server.memory).
var memoryOption = option.Option{Name: "memory", Kind: option.String,
	Usage: "run the server under this memory limit (512MB, 2GB), its page cache included; none for the machine's memory"}

// encryptionOption declares --encryption: whether a new server keeps its data encrypted at
// rest (a study's server.encryption).
var encryptionOption = option.Option{Name: "encryption", Kind: option.String, Values: []string{"on", "off"},
	Usage: "on: a new server keeps its data encrypted at rest (MariaDB); off: plainly"}

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
	var names []string
	cmd := &cobra.Command{
		Use:               "stop NAME... | --all",
		Short:             "Stop managed servers (their data is kept)",
		ValidArgsFunction: a.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg := a.registry()
			args = append(args, names...)
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
				if err := a.servers().StopServer(cmd.Context(), name); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "stop every managed server")
	// `server start` takes --name; a user who types it here too means the same.
	cmd.Flags().StringSliceVar(&names, "name", nil, "a server to stop, as \"server start --name\" named it (the same as giving NAME)")
	_ = cmd.RegisterFlagCompletionFunc("name", a.completeServers)
	return cmd
}

func (a *app) serverListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List managed servers and whether they run",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			list, err := a.registry().List()
			if err != nil {
				return err
			}
			tw := words.Columns(a.st.Stdout)
			fmt.Fprintln(tw, "NAME\tENGINE\tSTATE\tPID\tPORT\tSTORAGE\tMEMORY\tENCRYPTED\tBINARIES\tDSN")
			for _, inst := range list {
				state, pid := "stopped", "-"
				if inst.PID != 0 {
					state, pid = "running", fmt.Sprint(inst.PID)
				}
				bins := inst.Binaries
				if inst.Version != "" {
					bins = "version " + inst.Version
				}
				if bins == "" {
					bins = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", inst.Name, inst.Engine, state, pid, inst.Port, inst.StorageOf(),
					managed.FormatMemory(inst.Memory), map[bool]string{true: "yes", false: "no"}[inst.Encrypted], bins, inst.DSN)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			var clients []string
			for _, inst := range list {
				if inst.Client != "" {
					clients = append(clients, fmt.Sprintf("  %s\t%s", inst.Name, inst.Client))
				}
			}
			if len(clients) > 0 {
				a.printf("\nClients log in with the credentials file each names (only you can read it), never a password on the command line:\n")
				tw = words.Columns(a.st.Stdout)
				fmt.Fprintln(tw, strings.Join(clients, "\n"))
				return tw.Flush()
			}
			return nil
		},
	}
}

func (a *app) serverInstallCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "install ENGINE VERSION",
		Short: "Fetch a version of a server into the state directory, for --version and studies",
		Long: `Fetches VERSION of ENGINE's server into the state directory (once; later calls find
it), checks that it runs and is that version, and prints its directory. Managed servers
then run it with ` + "`server start --version VERSION`" + `, and studies with server.version.

PostgreSQL 13, 14, 15, 16, 17 and 18 come from the zonky builds that the embedded-postgres
library downloads from its default repository; without network access, the error says
which file to fetch and where to save it. Other engines: unpack the server yourself and
use --install DIR (server start) or server.install (studies).`,
		Example: `  dblat server install postgres 13
  dblat server start postgres --name pg13 --version 13
  dblat server start postgres --name pgmem --storage memory`,
		Args: exactArgs(2, "an ENGINE and a VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := engine.Lookup(args[0])
			if err != nil {
				return usageError{err}
			}
			dir, err := a.servers().Install(cmd.Context(), e.Name(), args[1])
			if err != nil {
				return err
			}
			a.printf("%s\n", dir)
			return nil
		},
	}
}

func (a *app) serverRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "remove NAME...",
		Short:             "Remove stopped managed servers: their directories, and the memory of those whose data was in memory",
		Args:              minArgs(1, "the NAME of a stopped server"),
		ValidArgsFunction: a.completeServers,
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, name := range args {
				if err := a.servers().RemoveServer(name); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		},
	}
}
