package signals

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// The names of the signals a Sampler records. PSI shares are of the interval (0 to 1);
// steal and iowait are shares of the machine's CPU time; CPU figures are in CPUs (CPU
// seconds per second of the interval); the stall is in seconds.
const (
	HostCPUSome    = "host.cpu.some"
	HostCPUFull    = "host.cpu.full"
	HostIOSome     = "host.io.some"
	HostIOFull     = "host.io.full"
	HostMemorySome = "host.memory.some"
	HostMemoryFull = "host.memory.full"
	// HostBusy is the CPUs the whole machine kept busy (user, nice, system, irq, softirq):
	// dblat, the server and everything else.
	HostBusy   = "host.busy"
	HostSteal  = "host.steal"
	HostIOWait = "host.iowait"
	HostCPUs   = "host.cpus"
	// HostCanary is the CPU time, in µs, that a fixed piece of work (canaryWork) took on
	// the sampler's thread: the machine's own speed. Its CPU time leaves out the time the
	// thread waited for a CPU, so it does not grow with the run's own load; it grows when
	// the machine runs slower for the same instructions — a neighbour on the virtual
	// machine's host sharing its cores and caches, a lower clock.
	HostCanary = "host.canary_us"
	// HostDirty is the data the machine's page cache holds to write back (Dirty and
	// Writeback of /proc/meminfo), in MiB at the interval's end: a restore's copy or
	// another process's writes that a commit's fsync may have to wait behind.
	HostDirty = "host.dirty_mib"
	// HostDiskWrite is what the machine's disks wrote in the interval, in MB/s (sectors
	// written of /proc/diskstats, whole disks only): another process's writes with direct IO
	// or fsync show here even when no task of the server waits on them.
	HostDiskWrite = "host.disk_write_mbs"

	// DblatCPU is the CPUs dblat's own process used; DblatStall the longest time within the
	// interval that its stall watch woke late (it went without a CPU that long).
	DblatCPU   = "dblat.cpu"
	DblatStall = "dblat.stall"

	// ServerCPU is the CPUs the managed server's processes used; the server's PSI shares
	// come from its own cgroup.
	ServerCPU        = "server.cpu"
	ServerIOSome     = "server.io.some"
	ServerIOFull     = "server.io.full"
	ServerCPUSome    = "server.cpu.some"
	ServerMemorySome = "server.memory.some"
	ServerMemoryFull = "server.memory.full"

	// ProcessPrefix starts the signals of the busiest other processes: "proc.PID.COMM", in
	// CPUs.
	ProcessPrefix = "proc."
	// EnginePrefix starts the server's own signals as its engine reads them
	// (engine.Signaler): "db.NAME".
	EnginePrefix = "db."
)

// Defaults of Config.
const (
	// DefaultEvery samples the host twice a second: a disk stall of a second then spans
	// two intervals at least, and is placed to half a second, finer than the runner's
	// samples of a second.
	DefaultEvery = 500 * time.Millisecond
	// DefaultServerEvery reads the server's own view once a second, the runner's sample
	// interval: a query a second costs the server little.
	DefaultServerEvery = time.Second
	// StallTick is how often the stall watch means to wake: a stall shorter than this is
	// not seen (a disturbance that names dblat's own process lasts 200 ms at least), and at
	// ten wake-ups a second, the host's reads among them, sampling costs about 3 ms of CPU
	// a second (BenchmarkSignalsCost).
	StallTick = 100 * time.Millisecond
	// busyOthers is the CPUs other processes must keep busy in an interval before the
	// sampler looks for them by name (a scan of /proc, which costs a millisecond or two).
	busyOthers = 0.2
	// topProcesses is how many of the busiest other processes are named per scan.
	topProcesses = 3
)

// Reading is one value the server reports about itself (engine.Signaler gives them in this
// form through the caller): a Counter is cumulative, and each interval stores its
// difference; any other is a gauge, stored as read.
type Reading struct {
	Name    string
	Value   float64
	Counter bool
}

// Config says what a Sampler watches besides the host and dblat itself. Zero fields take
// their defaults or are not watched.
type Config struct {
	// Every and ServerEvery are the intervals of the host's and the server's signals
	// (DefaultEvery, DefaultServerEvery).
	Every, ServerEvery time.Duration
	// ServerPID is the managed server's main process: its process tree's CPU is ServerCPU
	// (unless ServerCgroup gives it), and its processes are not counted among the others.
	// 0 for a server dblat does not manage (on another machine, or not known).
	ServerPID int
	// ServerCgroup is the managed server's cgroup v2 directory ("" without one): its
	// cpu.stat and pressure files give ServerCPU and the server's PSI shares.
	ServerCgroup string
	// Server reads the server's own view (engine.Signaler through the run's admin
	// connection); nil without one.
	Server func(ctx context.Context) ([]Reading, error)
}

// Sampler records signals until Stop. Start one per run.
type Sampler struct {
	cfg    Config
	psi    bool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// stall is the longest lateness the stall watch saw since the host's last reading.
	stall atomic.Int64

	mu     sync.Mutex
	points []point
	notes  []string
}

// point is one signal over an interval that ended at end.
type point struct {
	end  time.Time
	span time.Duration
	name string
	val  float64
}

// Start starts sampling in goroutines of its own.
func Start(cfg Config) *Sampler {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.ServerEvery <= 0 {
		cfg.ServerEvery = DefaultServerEvery
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sampler{cfg: cfg, cancel: cancel}
	h := newHost(cfg)
	s.psi = h.psi
	s.note(h.notes...)
	s.wg.Go(func() { s.sampleHost(ctx, h) })
	if cfg.Server != nil {
		s.wg.Go(func() { s.sampleServer(ctx) })
	}
	return s
}

// Pressure reports whether the kernel has pressure stall information, by which waits for
// the disk, memory and CPU are told.
func (s *Sampler) Pressure() bool { return s.psi }

// Peek returns what was recorded so far, as Stop does, and goes on sampling.
func (s *Sampler) Peek(windowStart time.Time) []results.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.collect(windowStart)
}

// Stop ends the sampling and returns what was recorded, as signals whose offsets are
// measured from windowStart (a zero windowStart measures them from the first sample's
// start), ordered by offset and name, and the notes on what could not be watched.
func (s *Sampler) Stop(windowStart time.Time) ([]results.Signal, []string) {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.collect(windowStart), append([]string(nil), s.notes...)
}

// collect is the points recorded so far as signals from windowStart (see Stop); s.mu is
// held.
func (s *Sampler) collect(windowStart time.Time) []results.Signal {
	if windowStart.IsZero() && len(s.points) > 0 {
		windowStart = s.points[0].end.Add(-s.points[0].span)
	}
	out := make([]results.Signal, len(s.points))
	for i, p := range s.points {
		out[i] = results.Signal{Offset: p.end.Sub(windowStart), Span: p.span, Name: p.name, Value: p.val}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Offset != out[j].Offset {
			return out[i].Offset < out[j].Offset
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Canary is the median of sigs' canaries (HostCanary): how fast the machine ran over
// them, in µs of CPU for the canary's work; 0 without any.
func Canary(sigs []results.Signal) float64 {
	var xs []float64
	for _, sg := range sigs {
		if sg.Name == HostCanary {
			xs = append(xs, sg.Value)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// Load is what a stretch of signals says of the machine, in means over its intervals: its
// CPUs, how many of them were busy, the share of the time a task waited for one (PSI cpu
// some), every task waited on IO (io full), and the hypervisor withheld (steal).
type Load struct {
	CPUs     float64 `json:"cpus"`
	BusyCPUs float64 `json:"busy_cpus"`
	CPUWait  float64 `json:"cpu_wait"`
	IOFull   float64 `json:"io_full"`
	Steal    float64 `json:"steal"`
}

// LoadOf summarises sigs (a Sampler's) as a Load; ok is false without the machine's CPU
// figures.
func LoadOf(sigs []results.Signal) (Load, bool) {
	sum := map[string]float64{}
	weight := map[string]float64{}
	for _, sg := range sigs {
		w := sg.Span.Seconds()
		sum[sg.Name] += sg.Value * w
		weight[sg.Name] += w
	}
	mean := func(name string) float64 {
		if weight[name] == 0 {
			return 0
		}
		return sum[name] / weight[name]
	}
	if weight[HostBusy] == 0 {
		return Load{}, false
	}
	return Load{CPUs: mean(HostCPUs), BusyCPUs: mean(HostBusy), CPUWait: mean(HostCPUSome), IOFull: mean(HostIOFull), Steal: mean(HostSteal)}, true
}

func (s *Sampler) add(end time.Time, span time.Duration, name string, val float64) {
	s.mu.Lock()
	s.points = append(s.points, point{end: end, span: span, name: name, val: val})
	s.mu.Unlock()
}

func (s *Sampler) note(msgs ...string) {
	if len(msgs) == 0 {
		return
	}
	s.mu.Lock()
	s.notes = append(s.notes, msgs...)
	s.mu.Unlock()
}

// sampleHost wakes every StallTick, keeps how late it woke at worst — the time dblat's
// process went without a CPU (the machine's other load, the hypervisor, a pause of the Go
// runtime) — and reads the host's signals every Every. One goroutine does both: on a
// virtual machine each wake-up of an idle Go process costs about a tenth of a millisecond
// of CPU, whatever it does once awake.
func (s *Sampler) sampleHost(ctx context.Context, h *host) {
	tick := time.NewTicker(StallTick)
	defer tick.Stop()
	prev := h.read(time.Now())
	last := prev.at
	for {
		select {
		case <-ctx.Done():
			s.flushHost(h, prev, time.Now())
			return
		case now := <-tick.C:
			// A ticker drops ticks it could not deliver, so a long stall is one late tick.
			late := int64(now.Sub(last) - StallTick)
			last = now
			if late > s.stall.Load() {
				s.stall.Store(late)
			}
			if now.Sub(prev.at) >= s.cfg.Every-StallTick/2 {
				prev = s.flushHost(h, prev, now)
			}
		}
	}
}

// flushHost reads the host at now and records the interval since prev.
func (s *Sampler) flushHost(h *host, prev hostReading, now time.Time) hostReading {
	cur := h.read(now)
	span := cur.at.Sub(prev.at)
	if span <= 0 {
		return prev
	}
	vals := h.interval(prev, cur)
	stall := time.Duration(s.stall.Swap(0))
	vals = append(vals, value{DblatStall, stall.Seconds()})
	s.mu.Lock()
	for _, v := range vals {
		s.points = append(s.points, point{end: cur.at, span: span, name: v.name, val: v.val})
	}
	s.mu.Unlock()
	return cur
}

// sampleServer reads the server's own view every ServerEvery.
func (s *Sampler) sampleServer(ctx context.Context) {
	tick := time.NewTicker(s.cfg.ServerEvery)
	defer tick.Stop()
	read := func() (time.Time, map[string]Reading, bool) {
		rs, err := s.cfg.Server(ctx)
		at := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				s.note("the server's own signals could not be read: " + oneLine(err))
			}
			return at, nil, false
		}
		m := make(map[string]Reading, len(rs))
		for _, r := range rs {
			m[r.Name] = r
		}
		return at, m, true
	}
	prevAt, prev, ok := read()
	if !ok {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		at, cur, ok := read()
		if !ok {
			return
		}
		span := at.Sub(prevAt)
		for name, r := range cur {
			v := r.Value
			if r.Counter {
				p, seen := prev[name]
				if !seen || v < p.Value {
					continue // a counter reset (a restarted server) has no interval
				}
				v -= p.Value
			}
			s.add(at, span, EnginePrefix+name, v)
		}
		prevAt, prev = at, cur
	}
}

func oneLine(err error) string {
	msg := err.Error()
	for i := range len(msg) {
		if msg[i] == '\n' {
			return msg[:i]
		}
	}
	return msg
}
