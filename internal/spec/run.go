package spec

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/dblat/dblat/internal/latency"
)

// Drive says how hard and how long a run drives its workload: everything the runner needs
// to pace terminals. Its JSON form is part of the stored Params.
type Drive struct {
	// Terminals is the number of emulated users (≥ 1).
	Terminals int `json:"terminals"`
	// FirstTerminal numbers the first terminal: a part of a run driven by several agents
	// runs terminals FirstTerminal … FirstTerminal + Terminals − 1 of the whole run, so
	// that each draws the inputs it would draw in one process. 0 for a run of one process
	// (and for a merged run: Stored clears it).
	FirstTerminal int `json:"first_terminal,omitempty"`
	// Connections is the pool size; 0 means one per terminal (Resolve fills it in). With
	// fewer connections than terminals, terminals queue and the wait is recorded apart.
	Connections int `json:"connections"`
	// Duration is the measurement window; Warmup runs before it and counts in no figure.
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	// MinTransactions, when positive, keeps the window going past Duration until it has
	// counted that many of the headline figure's transactions (the NOPM type's commits, or
	// every completed transaction), checked at every sample interval, and at most
	// MaxWindowFactor × Duration: the window's count, not the clock, bounds its counting
	// noise. 0 ends the window by time only.
	MinTransactions int `json:"min_transactions,omitempty"`
	// WarmupAuto ends the warm-up as soon as throughput is steady (package runner's rule),
	// Warmup being its ceiling. The warm-up a run had is stored with its figures.
	WarmupAuto bool `json:"warmup_auto,omitempty"`
	// Seed seeds the terminals' inputs and an open-loop run's Poisson schedule.
	Seed int64 `json:"seed"`
	// Rate, when positive, drives the run open-loop: transactions arrive at Rate per second
	// in total, on a schedule fixed in advance (Arrival, Seed), whatever the server does;
	// Terminals bounds how many run at once. 0 is a closed loop: each terminal starts its
	// next transaction when its last one ends.
	Rate float64 `json:"rate,omitempty"`
	// Arrival spaces an open-loop run's arrivals: ArrivalConstant or ArrivalPoisson; ""
	// for a closed loop (Resolve names the default when Rate is set).
	Arrival string `json:"arrival,omitempty"`
	// LatencyLimit, when positive, bounds the backlog as pgbench's --latency-limit does:
	// arrivals picked up later than it are skipped and counted, slower transactions are
	// counted late, and none is retried past it.
	LatencyLimit time.Duration `json:"latency_limit,omitempty"`
	// MaxTries is how many tries a transaction that fails with a retryable error gets, its
	// first included (pgbench's --max-tries); it runs again with the same input. The runner
	// retries, for every workload on every engine, so it is a field of the run rather than
	// an option. Runs stored before it was recorded read back 0, which means 1.
	MaxTries int `json:"max_tries,omitempty"`
}

// WarmupAuto is how a warm-up that ends when throughput is steady is written ("auto",
// "auto 30s").
const WarmupAuto = "auto"

// MaxWindowFactor bounds a window that runs on until its count (Drive.MinTransactions):
// at most four times its duration, so that a cell far slower than expected still ends in
// a time the study can plan for.
const MaxWindowFactor = 4

// MaxWindow is the longest the window may run: Duration, or with MinTransactions
// MaxWindowFactor × Duration.
func (d *Drive) MaxWindow() time.Duration {
	if d.MinTransactions > 0 {
		return MaxWindowFactor * d.Duration
	}
	return d.Duration
}

// DefaultWarmupCeiling bounds an automatic warm-up written without a ceiling: six times
// dblat run's fixed default of 10 s, so that a run whose throughput never settles (its
// data growing all along, a neighbour's load) still starts its window within a minute.
const DefaultWarmupCeiling = time.Minute

// OpenLoop reports whether the run is driven at a fixed arrival rate.
func (d *Drive) OpenLoop() bool { return d.Rate > 0 }

// Tries is MaxTries with its zero value read as 1 (runs stored before it was recorded).
func (d *Drive) Tries() int { return max(d.MaxTries, 1) }

// Pool is the pool size: Connections, its zero value read as one per terminal (the
// connections field's Zero).
func (d *Drive) Pool() int {
	if d.Connections == 0 {
		return d.Terminals
	}
	return d.Connections
}

// Arrival processes of an open-loop run (Drive.Arrival).
const (
	// ArrivalConstant spaces arrivals exactly 1/Rate apart.
	ArrivalConstant = "constant"
	// ArrivalPoisson draws the gaps between arrivals from an exponential distribution of
	// mean 1/Rate (a Poisson process), seeded by the run's seed.
	ArrivalPoisson = "poisson"
)

// Arrivals lists the arrival processes, the default first.
var Arrivals = []string{ArrivalConstant, ArrivalPoisson}

// Params are a run's parameters as stored with it (package results keeps them as
// results.Params): as requested in a Run, and resolved in a stored run (its scale, pool and
// mix filled in, every declared option at its value or default).
type Params struct {
	// Workload names a registered workload ("tpcc", "select-only").
	Workload string `json:"workload"`
	// Scale is the part of the loaded data the terminals use (TPC-C's warehouses): 0 asks
	// for all of it; a stored run holds the number used.
	Scale int `json:"scale"`
	Drive
	// Mix weighs the workload's transaction types: requested, nil means the workload's
	// default (the mix as written is the option OptionMix); stored, the weights used.
	Mix map[string]float64 `json:"mix,omitempty"`
	// Think turns on keying and think times, where the workload has them.
	Think bool `json:"think"`
	// RTT is the round-trip time added between terminals and server, 0 without a link:
	// split evenly between the directions, or Up + Down when they are set (Resolve fills
	// it in).
	RTT time.Duration `json:"rtt"`
	// Up and Down are the one-way delays when the link splits RTT otherwise than evenly;
	// both 0 for an even split.
	Up   time.Duration `json:"up,omitempty"`
	Down time.Duration `json:"down,omitempty"`
	// Jitter is the spread of each one-way delay and Distribution its shape
	// (latency.Config.Jitter, Distribution: "uniform", "normal", "paretonormal"; "" is
	// uniform).
	Jitter       time.Duration `json:"jitter,omitempty"`
	Distribution string        `json:"distribution,omitempty"`
	// Bandwidth is the link's capacity each way in bytes per second, 0 for unlimited.
	Bandwidth int64 `json:"bandwidth,omitempty"`
	// Loss is the probability that a TCP segment is lost each way (latency.Config.Loss).
	Loss float64 `json:"loss,omitempty"`
	// Profile names the network profile whose shape the link fields took (Profile.Apply);
	// "" when they were given one by one.
	Profile string `json:"profile,omitempty"`
	// ConnectTimeout bounds the making of each connection to the server, the terminals'
	// and dblat's own (engine.OpenOptions.ConnectTimeout); 0 leaves the driver's default.
	ConnectTimeout time.Duration `json:"connect_timeout,omitempty"`
	// During is the operation the run starts on its managed server during the window and
	// when, "backup@30s" (FormatDuring; Operation reads it); "" for none.
	During string `json:"during,omitempty"`
	// ScriptParams are the script workload's transactions and the file that makes their
	// data; their JSON is inline.
	ScriptParams
	// Options are workload, engine and database options by name (option.Option.Name), and
	// the reserved OptionMode, OptionMix and OptionTransport. A request holds what was
	// given; a stored run every declared option at its value or default, and the Run's
	// Record.
	Options map[string]string `json:"options,omitempty"`
}

// ScriptParams are the parameters of a workload that brings its own transactions (the
// script workload: Definition.Fields and LoadFields name them), declared as Fields. Package
// workload's Config and LoadConfig embed them as they are.
type ScriptParams struct {
	// Scripts and Builtins are the transactions, each a pgbench script file or a built-in
	// script with its weight, in canonical form ("orders.sql@10", "select-only"); Defines
	// sets the scripts' variables (pgbench -D); Init is the file that creates and fills
	// their tables. Paths are as written: relative to Run.Dir.
	Scripts  []string          `json:"scripts,omitempty"`
	Builtins []string          `json:"builtins,omitempty"`
	Defines  map[string]string `json:"defines,omitempty"`
	Init     string            `json:"init,omitempty"`
}

// Reserved option names: options that every run has, stored with the others.
const (
	// OptionMode is a workload's round-trip mode (TPC-C's client, batched, procedure); the
	// workload declares its values.
	OptionMode = "mode"
	// OptionMix is the transaction mix as written ("45,43,4,4,4" or "new_order=45,...");
	// the execution core parses it into Params.Mix with the workload's transaction types.
	OptionMix = "mix"
	// OptionTransport is how a connection reaches the server: TransportTCP (the default)
	// or TransportUnix (a managed server's socket).
	OptionTransport = "transport"
)

// Transports a run may connect by (OptionTransport).
const (
	TransportTCP  = "tcp"
	TransportUnix = "unix"
)

// Run is the description of one run: its Params as requested, and where and how it reaches
// the server. The command line and the study cells build one; the execution core runs it as
// it is.
type Run struct {
	Params
	// Target is a managed server's name or a DSN (never stored: results keep a label).
	Target string
	// Link, when set, puts dblat's latency link between the terminals and the server; nil
	// connects directly (TCP) or through the Unix socket (TransportUnix). Its shape is the
	// Params' link fields (Resolve writes them into it, LinkConfig): what it holds of its
	// own is how the link runs (DelayConnect, QueueLimit, Spin).
	Link *latency.Config
	// Study and Cell tie the run to a study cell; "" for a run of its own.
	Study, Cell string
	// Record holds what is stored with the run's options besides their values: a study
	// cell's requested server settings ("set.NAME") and binaries ("server.version").
	Record map[string]string
	// Dir is the directory the run's relative paths (Scripts, Init) are taken from: a
	// study file's own; "" is the working directory.
	Dir string
	// Files holds the text of every file the run read, by path as written: the execution
	// core reads them once, while it checks the run, so that the run handed to agents on
	// other machines runs the same text.
	Files map[string]string
}

// Paths a run's terminals take to the server (Run.Path).
const (
	// PathDirect connects straight to the server's TCP port.
	PathDirect = "direct"
	// PathLink goes through dblat's latency link, in process (even at an RTT of 0).
	PathLink = "link"
	// PathUnix connects through a managed server's Unix socket.
	PathUnix = "unix"
)

// Transport is the run's OptionTransport, TransportTCP when not given.
func (r *Run) Transport() string {
	if t := r.Options[OptionTransport]; t != "" {
		return t
	}
	return TransportTCP
}

// Path is how the run's terminals reach the server: PathUnix, PathLink or PathDirect.
func (r *Run) Path() string {
	switch {
	case r.Transport() == TransportUnix:
		return PathUnix
	case r.Link != nil:
		return PathLink
	}
	return PathDirect
}

// PathOf is the path a stored run took: linked says whether it went through a latency link.
func PathOf(p *Params, linked bool) string {
	switch {
	case p.Options[OptionTransport] == TransportUnix:
		return PathUnix
	case linked:
		return PathLink
	}
	return PathDirect
}

// Resolve fills in what a Run's zero values stand for: one connection per terminal, the
// default arrival process of an open loop, the RTT of a link split into Up and Down, and
// the link's shape (its Link takes the link fields, and the run's seed for its draws). It
// is idempotent; Validate expects a resolved Run. (MaxTries has no zero default: front ends
// start from 1.)
func (r *Run) Resolve() {
	r.Connections = r.Pool()
	if r.Rate > 0 && r.Arrival == "" {
		r.Arrival = ArrivalConstant
	}
	if r.RTT == 0 && (r.Up != 0 || r.Down != 0) {
		r.RTT = r.Up + r.Down
	}
	if r.Link != nil {
		c := r.Params.LinkConfig()
		c.DelayConnect, c.QueueLimit, c.Spin = r.Link.DelayConnect, r.Link.QueueLimit, r.Link.Spin
		*r.Link = c
	}
}

// LinkConfig returns the link the link fields of p describe: its delays, jitter,
// bandwidth (the same each way) and loss, its draws seeded by p's seed. Fields out of range
// are passed on as they are (Validate reports them).
func (p *Params) LinkConfig() latency.Config {
	c := latency.Config{RTT: p.RTT, Up: p.Up, Down: p.Down, Jitter: p.Jitter, BandwidthUp: p.Bandwidth,
		BandwidthDown: p.Bandwidth, Loss: p.Loss, Seed: p.Seed}
	if p.Up != 0 || p.Down != 0 {
		c.RTT = 0
	}
	c.Distribution, _ = latency.ParseDistribution(cmp.Or(p.Distribution, DefaultDistribution))
	return c
}

// Shaped reports whether any of p's link fields (the profile's name aside) is away from its
// default: a run with one must go through the link.
func (p *Params) Shaped() bool {
	for i := range Fields {
		// A profile is its fields' values: it shapes nothing of its own.
		if f := &Fields[i]; f.Link && f.Name != "profile" && f.Value(p) != f.Default {
			return true
		}
	}
	return false
}

// Clone returns r with maps of its own (the link configuration is a value, copied too).
func (r Run) Clone() Run {
	r.Options = maps.Clone(r.Options)
	r.Record = maps.Clone(r.Record)
	r.Mix = maps.Clone(r.Mix)
	r.Scripts = slices.Clone(r.Scripts)
	r.Builtins = slices.Clone(r.Builtins)
	r.Defines = maps.Clone(r.Defines)
	r.Files = maps.Clone(r.Files)
	if r.Link != nil {
		l := *r.Link
		r.Link = &l
	}
	return r
}

// Stored returns the parameters stored with the run, derived from the request: scale is the
// scale used, mix the weights used, and options every option's value (declared defaults
// included); the Record is added to them.
func (r *Run) Stored(scale int, mix map[string]float64, options map[string]string) Params {
	p := r.Params
	p.FirstTerminal = 0
	p.Scale, p.Mix = scale, mix
	p.Options = maps.Clone(options)
	if p.Options == nil {
		p.Options = map[string]string{}
	}
	maps.Copy(p.Options, r.Record)
	return p
}
