package cli

import (
	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
)

// declaredAnnotation marks a flag that a declaration backs: its value is the declared
// option's name (an option.Option of a workload or an engine, or a spec.Field). Flags
// without it must be plainFlags; TestEveryFlagIsDeclared walks the command tree to hold
// both to it.
const declaredAnnotation = "dblat_declared"

// declared marks the flag name of fs as backed by the declaration o.
func declared(fs *pflag.FlagSet, name string, o option.Option) {
	_ = fs.SetAnnotation(name, declaredAnnotation, []string{o.Name})
}

// fieldFlag registers the flag of a run parameter, fld, reading into p: name and usage are
// fld's own (FlagName, Usage) but where a command spells it otherwise (the scale under the
// workload's unit).
func fieldFlag(fs *pflag.FlagSet, fld *spec.Field, p *spec.Params, name, short, usage string) {
	fs.VarP(spec.FlagValue{F: fld, P: p}, name, short, usage)
	declared(fs, name, fld.Option)
}

// plainFlags are the flags that are no parameter of what a run or a server is, and so have
// no declaration: which server, store or file a command works on, where its output goes and
// in what format, how it reports progress, what it prints. They are listed by command path
// ("dblat run *": every command below dblat run). A parameter of a run belongs in
// spec.Fields, a workload's or an engine's in its option.Set (Definition.Options,
// LoadOptions, RunHooks.RunOptions, Databases.DatabaseOptions), registered with fieldFlag or
// optionFlags; only a flag that is none of these is added here, to its command's line.
var plainFlags = map[string][]string{
	"dblat":            {"state", "results", "cpuprofile", "no-cpu-latency-hold"},
	"dblat agent":      {"name", "target", "idle-exit", "heartbeat"},
	"dblat analyze":    {"format"},
	"dblat calibrate":  {"rtt", "conns", "inline", "samples", "bulk", "format", "fail-on-miss", "direct", "delay-connect"},
	"dblat check runs": {"factors"},
	"dblat check tpcc": {"target"},
	"dblat load *":     {"target", "seed", "workers", "warehouses", "scale"},
	"dblat observe":    {"pcap", "interface", "server", "port", "duration", "output", "record", "capture", "engine", "no-store"},
	"dblat predict":    {"observed", "rtt", "clients", "format"},
	"dblat proxy":      {"listen", "upstream", "print-every", "observe", "record", "engine", "no-store", "direct", "delay-connect", "capture"},
	"dblat quickstart": {"output"},
	// A replay's pacing is no parameter of a run or a study: a replay is one command.
	"dblat replay": {"pcap", "recording", "server", "port", "target", "output", "no-store", "restore", "direct", "delay-connect",
		"stall-timeout", "speed", "think-scale", "think-auto-correct", "fast", "order"},
	"dblat report":           {"output", "format", "full", "scale", "latency"},
	"dblat results export":   {"format", "study", "samples"},
	"dblat results list":     {"study", "status", "limit"},
	"dblat results show":     {"settings", "scripts"},
	"dblat run *":            {"target", "print-every", "transport", "fail-on-overload", "agents", "agents-wait", "direct", "delay-connect", "metrics-addr", "progress", "mix"},
	"dblat server start":     {"bin-dir", "pg-bin", "mariadb-bin", "fb-bin", "run-as", "name", "set", "port", "install", "version"},
	"dblat server stop":      {"all", "name"},
	"dblat server templates": {"remove", "remove-all"},
	"dblat study resume":     {"output", "budget", "metrics-addr", "progress"},
	"dblat study run":        {"output", "budget", "metrics-addr", "progress"},
}
