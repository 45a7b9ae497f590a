// Package study reads study files and turns them into the runs of an experiment: the matrix
// of cells (one per combination of factor levels), a stable key per cell, the order of runs
// (seeded, interleaved, resumable) and an estimate of how long they take.
//
// Each cell's run is a spec.Run: the run's own keys (base.KEY and their factors) are package
// spec's Fields, read and written by that table, and every cell's run is validated
// (spec.Run.Validate, as the study's run it becomes: its scale names the data to load) when
// the file is parsed, each problem placed at the factor level or base key of the field it
// concerns (Study.FieldError). The study's own keys that hold a number, a duration or a
// choice (design, budget, seed, order, cooldown, between_runs, max_failures, agents, repeat)
// are declared as options (package option), read and range-checked as every option is; the
// study adds only what is its own: a factor level names a value, never a shorthand that
// Resolve fills in (connections 0). It does not start servers, run
// workloads or store anything: package execution sits above it, checks every cell against
// the workload and engine registries before any server starts (placing problems with
// FieldError and Errorf), asks the results store how many finished runs each cell key
// already has, and runs Study.Plan. Package results sits beside it: the factor keys and the
// canonical spellings are shared, so a cell's Levels equal what results.FactorValue reads
// back from a stored run.
//
// # The path to the server
//
// A study that writes a field of the link (base.rtt, even 0, or any key below, in base or
// as a factor) sends every TCP cell through dblat's latency link, at RTT 0 too, so that its
// cells compare like for like; one that does not connects directly. A Unix-socket cell
// (opt.transport: unix) never goes through the link, so its link fields must stay at their
// defaults (profile same-host is one). The path is thus the same for every cell unless the
// transport itself is a factor (Study.Linked; `dblat study plan` prints each cell's path).
//
// # The link's shape
//
// The link's fields are keys of base and factors, and the flags of the same names of dblat
// run, dblat proxy and dblat calibrate (package spec declares them once: spec.LinkKeys):
//
//   - rtt: round-trip time added between terminals and server, half each way unless up and
//     down split it; 0 still goes through the link
//   - up: one-way delay terminals→server; with down, in place of rtt's even split (rtt is
//     then up + down)
//   - down: one-way delay server→terminals; with up, in place of rtt's even split (rtt is
//     then up + down)
//   - jitter: spread of each one-way delay, drawn per chunk without reordering: the
//     half-width of uniform jitter, the standard deviation of normal and paretonormal
//   - distribution: shape of the jitter: uniform, normal or paretonormal, as tc-netem's
//   - bandwidth: capacity each way, shared by the connections like one cable: 100mbit,
//     1gbit, 12.5MB/s, or unlimited
//   - loss: share of TCP segments lost each way, like 0.1%: a lost segment delays its data
//     by a retransmission timeout (RTT + 200 ms at least), as TCP does
//   - profile: a named network's whole shape (same-host, lan-1gbe, lan-10gbe,
//     lan-100mbit-loaded, same-az, cross-az, cross-region, or a study's own): its rtt,
//     jitter, bandwidth and loss, which the link fields given beside it override
//
// A profile sets every link field: those it names to its values, the others to their
// defaults; in a cell, a factor of a link field then overrides the profile's value
// (profile: [lan-100mbit-loaded] with bandwidth: [unlimited] is that network's latency
// without its capacity). base.profile beside another base link key is refused as
// ambiguous. The built-in profiles and the sources of their figures are spec.Profiles
// (docs/link.md lists them); a study declares its own under profiles:, each with the link
// fields it sets, a description and a source:
//
//	profiles:
//	  dolphin: {rtt: 300µs, description: "a Dolphin interconnect", source: "seed 004"}
//	factors:
//	  profile: [lan-100mbit-loaded, lan-1gbe, dolphin]
//
// Every link field is a factor: bandwidth: [1mbit, unlimited] × jitter: [0, 500us] at
// base.rtt 1ms asks what a narrow or a jittery path does to throughput and to the
// response-time percentiles, which the report then draws against bandwidth and jitter.
//
// # File format
//
// A study file is one YAML document (see examples/ at the root of the repository):
//
//	study: latency            # name, required; runs are stored with it ([A-Za-z0-9._-])
//	description: free text
//	design: full              # full (every combination, default) or ofat (one factor at a time)
//	repeat: 5                 # finished runs wanted per cell (default 5), or a range:
//	# repeat: 2..6            # at least 2 runs per cell, more while its interval is wide,
//	# precision: 10%          # ... until its 95 % interval is within ±10 % of its mean, at most 6
//	# budget: 2h              # stop after this long; the widest intervals get the time first
//	seed: 42                  # seeds the order of runs (default 1)
//	order: random             # random (default) or grouped: see Plan
//	cooldown: 5s              # pause after each run (default 0)
//	between_runs: restore     # restore a pristine copy of the data before each run (default) or keep
//	max_failures: 3           # failed runs after which the study stops (default 3)
//	agents: 3                 # drive each run with 3 `dblat agent` processes (default 0: this one)
//	server:                   # a managed server that dblat starts ...
//	  engine: postgres
//	  name: latency           # managed server name (default: the study name)
//	  version: 16             # the server version (PostgreSQL 13-18: fetched on first use) ...
//	  # install: /opt/pg16    # ... or an installation directory to run it from
//	  memory: 512MB           # a memory limit: the server in a memory cgroup (default none)
//	  encryption: off         # on: its data encrypted at rest, where the engine can (MariaDB)
//	  settings: {shared_buffers: 256MB}
//	# target: pg1             # ... or an existing server (name or DSN without password)
//	base:                     # every run's parameters unless a factor says otherwise
//	  workload: tpcc          # default tpcc
//	  warehouses: 1           # the workload's scale (default 1)
//	  terminals: 10           # default 10
//	  connections: 0          # pool size; 0 = one per terminal (default)
//	  duration: 60s           # measurement window (default 60s)
//	  warmup: 10s             # default 10s; auto: until throughput is steady (at most 1m),
//	                          # "auto 30s": at most 30s (package runner's rule)
//	  rtt: 0                  # round-trip time added between terminals and server (default 0)
//	  # jitter: 100µs, bandwidth: 100mbit, loss: 0.1%, profile: cross-az: see below
//	  mode: client            # workload execution mode (default: the workload's own)
//	  think: false            # TPC-C keying and think times (default false)
//	  mix: "45,43,4,4,4"      # transaction weights (default: the workload's own)
//	  seed: 1                 # the terminals' random seed, and an open loop's arrivals (default 1)
//	  rate: 0                 # open loop: transactions arrive at this many per second in
//	                          # total, whatever the server does (default 0: closed loop)
//	  arrival: constant       # how the rate's arrivals are spaced: constant or poisson
//	                          # (default constant; only with a rate)
//	  latency_limit: 0        # skip arrivals picked up later than this, count slower
//	                          # transactions late, retry none past it (default 0: none)
//	  max_tries: 1            # tries per transaction after a serialization failure,
//	                          # deadlock or update conflict, with the same input (default 1)
//	  during: none            # backup@30s: an operation on the managed server 30 s into the
//	                          # window (backup, vacuum, checkpoint, index; default none)
//	  connect_timeout: 30s    # how long making one connection may take (default 30s; 0:
//	                          # the driver's own); changes no figure, so in no cell key
//	  options: {page_size: 8192}   # other workload or engine options
//	  # workload: script only (users' own transactions; paths relative to this file):
//	  scripts: [orders.sql@10, status.sql]   # pgbench scripts FILE[@WEIGHT] (-f)
//	  builtins: [tpcb-like]   # pgbench's built-in scripts NAME[@WEIGHT] (-b)
//	  defines: {items: 1000}  # the scripts' variables (-D NAME=VALUE)
//	  init: schema.sql        # the script that creates and fills their tables, loaded once
//	factors:                  # each key with its list of levels, in the order given
//	  rtt: [0, 1ms, 5ms, 20ms]
//	  terminals: [1, 4, 16]
//	  set.shared_buffers: [128MB, 1GB]   # a server setting: the server restarts between levels
//
// Factor keys are those of package results: rtt and the link's other fields (up, down,
// jitter, distribution, bandwidth, loss, profile: see "The link's shape"), terminals,
// connections, warehouses,
// duration, warmup, engine, think, target, server.version and server.install (the managed
// server's version or installation), server.memory and server.encryption (see "Memory,
// encryption and operations"), during, rate, arrival, latency_limit, max_tries, scripts and
// builtins (a level is one script or a list of them: [a.sql, [b.sql@3, c.sql]]), set.NAME (a
// server setting) and opt.NAME (a workload or engine option; opt.mode and opt.mix set
// base.mode and base.mix). rate, arrival, latency_limit and max_tries are parameters of the
// run, not options, for every workload on every engine: they are written without opt.
// (opt.max_tries is refused with that spelling). A rate level of 0 is a closed-loop run;
// rates are numbers of transactions per second ("500", "2.5", "1e3", also "500/s"). A rate
// and think times pace a run two ways and cannot be combined.
//
// # Versions
//
// server.version: [13, 15, 17] (or server.install: [DIR1, DIR2]) runs every level on a
// server of its own, named after the study's server with the level appended, each with
// its own data and pristine copy: a data directory belongs to one version. order: grouped
// restarts each server once per round. A version or installation belongs to one engine,
// so it does not combine with an engine factor; an installation's path is taken from the
// working directory when relative. Durations are
// Go durations ("1.5ms", "100µs" or "100us", "2m"); a bare 0 is allowed, other bare numbers
// are not. Booleans are true, yes, on or 1, and false, no, off or 0. Levels are compared after canonical formatting, so [1ms, 1000us] is a duplicate.
//
// Every problem is reported with file:line:column; unknown keys suggest the nearest known one.
// Up to 20 problems are reported at once.
//
// # Memory, encryption and operations
//
// Seed 001's remaining questions. server.memory: [none, 512MB] runs the managed server
// with the machine's memory or in a memory cgroup limited to 512 MB (its processes and the
// page cache of what it reads count against it): a database larger than memory is then a
// few GB on any machine. The server restarts between levels, and a cache setting larger
// than a level is refused at plan time, as is a limit on a host that cannot hold one.
// server.encryption: [off, on] runs the encrypted level on a server of its own (its data is
// readable with its key only); an engine without encryption at rest is refused at plan
// time with why (PostgreSQL's community server has none, nor do Debian's Firebird 3
// packages). Both are also keys of server: for every cell, and their levels none and off
// keep the cell keys of a study that does not name them.
//
// during: backup@30s starts an operation on the managed server 30 s into each run's window
// — backup (the engine's own tool), vacuum (Firebird's sweep; MariaDB has none), checkpoint
// (Firebird has none) or index (an index build on the workload's largest table) — and
// records its times and outcome with the run; an operation the engine does not have, or an
// offset beyond the window, is refused at plan time. during: [none, backup@30s] compares a
// window with the operation against one without.
//
// # Sequential repeats
//
// With repeat: MIN..MAX and precision: P%, every cell gets MIN runs, then another round at a
// time while the 95 % confidence interval of its headline metric (NOPM for TPC-C, else TPS:
// results.MetricOf), mean ± t(0.975, n−1)·s/√n over its n finished runs, is wider than ±P %
// of its mean, up to MAX runs (Wanted). Rounds stay complete: every unfinished cell gets its
// k-th run before any gets its (k+1)-th, in the seeded order of round k, so the plan of an
// adaptive study reaches one round past what it has measured and the execution core makes
// it again after each round (Schedule). A precision without a repeat key means repeat:
// 3..10; a fixed repeat with a precision runs its repeats and reports each cell against the
// target. A budget spends the time on the cells whose intervals are widest against their
// target (Priority, Allot).
//
// # Designs
//
// full: the cartesian product of all levels (Π levels cells), the first factor varying
// slowest. ofat: the base cell, then for each factor in turn each of its levels that differs
// from the base's value of that parameter, all other parameters at the base (1 + Σ(levels−1)
// cells when every factor lists the base value, one more per factor that does not). The base
// value of a factor is the value the base block gives (or its default): for set.NAME it is
// server.settings.NAME, or the server's own default when absent (level "").
//
// # Cell keys
//
// CellKey hashes the resolved parameters of a run (see CellKey), so it depends neither on the
// layout of the file nor on whether a value came from the base or a factor, nor on repeat,
// seed, order, cooldown, between_runs, max_failures or agents, which schedule runs but do not
// change what one run measures (a run records how many agents drove it). Parameters added after the first studies (rate, arrival,
// latency_limit, max_tries, and the link's fields but rtt) enter the key only away from
// their defaults, so the keys of existing studies, and the runs stored under them, stay as
// they were. A profile's cells hold its values, so a key says what the link was.
package study
