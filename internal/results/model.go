package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// Status is the life-cycle state of a stored run.
type Status string

// The states of a run. A run is inserted as StatusRunning when measurement starts and is
// updated exactly once when it ends. A run found StatusRunning whose process is gone is
// marked StatusAborted the next time a store is opened.
const (
	StatusRunning  Status = "running"
	StatusFinished Status = "finished"
	StatusFailed   Status = "failed"
	StatusAborted  Status = "aborted"
)

// Run is one measured run with everything needed to trust and compare it. Passwords never
// appear in it: Target holds a redacted DSN or a managed server's name.
type Run struct {
	// ID numbers the run in its store; a run copied to another store (Import) may get
	// another ID there.
	ID int64 `json:"id"`
	// UID identifies the run in every store: a UUID given at Begin and kept by Import.
	UID     string    `json:"uid,omitempty"`
	Study   string    `json:"study,omitempty"`
	CellKey string    `json:"cell_key,omitempty"`
	Status  Status    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`

	Params Params `json:"params"`
	// Link describes the latency link between terminals and server; nil when there was none.
	Link   *Link  `json:"link,omitempty"`
	Server Server `json:"server"`
	Client Client `json:"client"`

	// StatsBefore and StatsAfter are the server's cumulative counters around the run.
	StatsBefore map[string]float64 `json:"stats_before,omitempty"`
	StatsAfter  map[string]float64 `json:"stats_after,omitempty"`

	Summary Summary     `json:"summary"`
	Tx      []TxSummary `json:"tx,omitempty"`
	// Samples are per-interval figures; loaded only when asked for.
	Samples []Sample `json:"samples,omitempty"`

	// Agents is how many dblat agents drove the run together, each a part of its terminals
	// (Store.Parts); 0 for a run of one process. Its figures are then the exact merge of
	// the parts'.
	Agents int `json:"agents,omitempty"`
	// StartSkew is the spread of the parts' actual starts on the store's clock (latest
	// minus earliest); 0 for a run of one process.
	StartSkew time.Duration `json:"start_skew_ns,omitempty"`
	// Observation is, for a run of workload WorkloadObserved, what dblat proxy --observe
	// saw of an application's transactions (package observe's Observation, as JSON); nil
	// for other runs.
	Observation json.RawMessage `json:"observation,omitempty"`

	// Scripts are the texts the run ran (the script workload's scripts and the init script
	// that made its data), in the order the run names them; written at Begin.
	Scripts []Script `json:"scripts,omitempty"`

	// Signals are what the host, dblat itself and the server were doing beside the run,
	// interval by interval (package signals samples them); written at Finish, loaded with
	// the Samples.
	Signals []Signal `json:"signals,omitempty"`
	// Disturbances are the stretches of the window whose throughput or response time
	// something besides the workload took, each with its cause and evidence (package
	// disturb names them from the Samples and Signals); nil for a quiet run, and for runs
	// stored before they were recorded.
	Disturbances []Disturbance `json:"disturbances,omitempty"`
	// SetAside, when not empty, says why the run is left out of its cell's figures (a
	// study's policy for disturbed runs re-ran it); the run is kept, with its evidence, and
	// reports say so. "" for a run that counts.
	SetAside string `json:"set_aside,omitempty"`
	// Operations are what dblat started on the managed server during the window
	// (Params.During), with their times and outcomes; nil for a run without one, and for
	// runs stored before they were recorded.
	Operations []Operation `json:"operations,omitempty"`
}

// Operation is an operation dblat started on the managed server during a run's window (a
// backup, a vacuum or sweep, a checkpoint, an index build: dblat run --during), so that a
// run measures what the server's users feel while it runs; package disturb names it as
// the cause of what it disturbed, never as an unexplained or external one.
type Operation struct {
	// Name is the operation as the during field names it ("backup"), and Tool what the
	// engine ran for it ("pg_basebackup -X stream -c fast").
	Name string `json:"name"`
	Tool string `json:"tool,omitempty"`
	// At is the offset into the window it was asked to start at; Started and Ended are when
	// it started and ended, as offsets from the window's start like Sample.Offset (Ended
	// may lie past the window's end: an operation that outlasts the window is waited for).
	At      time.Duration `json:"at_ns"`
	Started time.Duration `json:"started_ns"`
	Ended   time.Duration `json:"ended_ns"`
	// Outcome is OperationDone, OperationFailed, OperationCanceled or
	// OperationNotStarted; Error says why it failed or was canceled.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Detail says what it did ("1.9 GiB in 1436 files").
	Detail string `json:"detail,omitempty"`
}

// The outcomes of an Operation.
const (
	OperationDone       = "done"
	OperationFailed     = "failed"
	OperationCanceled   = "canceled"
	OperationNotStarted = "not started"
)

// Ran reports whether the operation started, whatever its outcome: its Started and Ended
// bound a stretch of the window.
func (o *Operation) Ran() bool { return o.Outcome != OperationNotStarted }

// Signal is one reading of what was happening beside a run during one interval: a share of
// the interval (pressure stall information), CPUs used, seconds spent, or a count, as its
// name says (package signals lists them and their units).
type Signal struct {
	// Offset is the end of the interval measured from the start of the measurement window,
	// like Sample.Offset (negative in the warm-up); Span is the interval's length.
	Offset time.Duration `json:"offset"`
	Span   time.Duration `json:"span"`
	Name   string        `json:"name"`
	Value  float64       `json:"value"`
}

// Disturbance is a stretch of a run's window in which the run lost throughput, or its
// transactions waited, for a cause besides its own workload: the host's disk, CPU taken by
// other processes, memory pressure, dblat's own process going without a CPU, the server's
// own checkpoint or vacuum, or none that its signals explain (package disturb names the
// causes).
type Disturbance struct {
	Cause string `json:"cause"`
	// From and To bound the stretch, as offsets from the window's start.
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
	// Lost is how much of the window's time the run lost: the throughput it lacked over
	// the stretch, as a share of its undisturbed throughput, times the stretch's length.
	Lost time.Duration `json:"lost_ns"`
	// Evidence gives the figures that show the cause, in one line.
	Evidence string `json:"evidence"`
}

// Script is one text a run ran, hashed, so that a report says exactly what ran and runs
// that ran the same text can be told from runs that did not. The store keeps each text
// once, by its hash.
type Script struct {
	// Kind is "script" (a transaction type's script file), "builtin" (one of pgbench's
	// built-in scripts) or "init" (the script that created and filled the data).
	Kind string `json:"kind"`
	// Name is the transaction type the script is ("orders"), "init" for an init script.
	Name string `json:"name"`
	// Path is the file as the run named it (the engine's variant when it ran one), or the
	// built-in script's file.
	Path string `json:"path"`
	// Weight is the script's weight in the mix; 0 for an init script.
	Weight float64 `json:"weight,omitempty"`
	// SHA256 is the hex SHA-256 of Text (ScriptSum).
	SHA256 string `json:"sha256"`
	Text   string `json:"text"`
}

// The kinds of Script.
const (
	ScriptFile    = "script"
	ScriptBuiltin = "builtin"
	ScriptInit    = "init"
)

// ScriptSum returns the hex SHA-256 of a script's text, as Script.SHA256 holds it.
func ScriptSum(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}

// WorkloadObserved is the workload name of a run that stores an observation of an
// application through dblat proxy rather than a workload dblat ran.
const WorkloadObserved = "observed"

// Params are the workload and run parameters a run was stored with (package spec declares
// them with the run's description).
type Params = spec.Params

// Link is the latency link a run went through, with what it was asked for and what a
// calibration measured just before the run.
type Link struct {
	// Kind is "inline" (dblat's delay line in the terminals' own process, what runs use
	// since they stopped going through a loopback proxy) or "proxy" (the same delay line
	// as a TCP proxy); an observed run's "pcap" or "interface". Runs of different kinds do
	// not compare.
	Kind string `json:"kind"`
	// RTT, Up and Down are the added delays requested (Up/Down one way).
	RTT  time.Duration `json:"rtt"`
	Up   time.Duration `json:"up"`
	Down time.Duration `json:"down"`
	// Jitter and Distribution describe the requested variation of the delay.
	Jitter       time.Duration `json:"jitter,omitempty"`
	Distribution string        `json:"distribution,omitempty"`
	// BandwidthUp/Down are byte-per-second limits (0 = none).
	BandwidthUp   int64 `json:"bandwidth_up,omitempty"`
	BandwidthDown int64 `json:"bandwidth_down,omitempty"`
	// DelayConnect is set when connection set-up costs one RTT, like on a real network.
	DelayConnect bool `json:"delay_connect"`
	// Achieved RTT added by the link, measured by ping-pong through it before the run: the
	// median, 99th percentile, and the number of samples.
	AchievedP50 time.Duration `json:"achieved_p50"`
	AchievedP99 time.Duration `json:"achieved_p99"`
	Samples     int           `json:"samples"`
	// Totals are the link's own counts over the whole run (all connections).
	RoundTrips int64 `json:"round_trips"`
	BytesUp    int64 `json:"bytes_up"`
	BytesDown  int64 `json:"bytes_down"`
	// LatenessUp and LatenessDown measure the link during the run's measurement window, on
	// the real traffic: how late it released each delayed chunk after its due time, toward
	// the server and back to the terminals. Nil for runs stored before they were recorded.
	LatenessUp   *Lateness `json:"lateness_up,omitempty"`
	LatenessDown *Lateness `json:"lateness_down,omitempty"`
	// CPUSeconds is the CPU the link's own timing work took during the measurement window
	// (its releaser's busy time, without the writes a direct client would make too, and every
	// precise wait's spin), part of
	// Client.CPUSeconds; 0 when not measured.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	// Loss is the share of segments lost each way that was asked for, and RTO the
	// retransmission timeout each loss cost (latency.Config.RTO); both 0 without loss.
	Loss float64       `json:"loss,omitempty"`
	RTO  time.Duration `json:"rto,omitempty"`
	// Achieved is what the link did to the traffic during the measurement window, per
	// direction: the delays it applied, the bandwidth used, the losses. Nil for runs stored
	// before it was recorded.
	Achieved *LinkAchieved `json:"achieved,omitempty"`
}

// LinkAchieved is what a latency link did during a run's measurement window, each way.
type LinkAchieved struct {
	// Window is how long the measurement window lasted, which the rates are over.
	Window time.Duration `json:"window_ns"`
	Up     LinkWay       `json:"up"`
	Down   LinkWay       `json:"down"`
}

// LinkWay is what the link did in one direction (up: terminals to server).
type LinkWay struct {
	// Delay is the one-way delay the link applied to each chunk, from its arrival to its
	// release time (its lateness, Link.LatenessUp or LatenessDown, comes on top): measured
	// chunk by chunk where jitter, bandwidth or loss shape the direction; otherwise the
	// direction's delay, which every chunk got (Measured false, N the chunks released).
	Delay Delay `json:"delay"`
	// Jitter is the jitter the standard deviation of the delays no loss delayed stands
	// for in the run's distribution (over latency.Distribution.Unit): what the link
	// achieved of the Jitter asked for, a bandwidth queue's spread included; 0 without
	// jitter.
	Jitter time.Duration `json:"jitter,omitempty"`
	// Bytes is what the direction carried in the window; MeanRate is that per second of
	// the window and PeakRate the most the link delivered in one interval of PeakInterval
	// (what its cable serialised where a bandwidth limit paces the direction), per second,
	// both in bytes per second.
	Bytes    int64   `json:"bytes"`
	MeanRate float64 `json:"mean_rate"`
	PeakRate float64 `json:"peak_rate"`
	// Sent counts the segments the direction carried and their retransmissions, Lost
	// those lost; LossChunks the chunks that waited for a retransmission, LossAdded how long
	// they waited in all. Zero without loss.
	Sent       int64         `json:"sent,omitempty"`
	Lost       int64         `json:"lost,omitempty"`
	LossChunks int64         `json:"loss_chunks,omitempty"`
	LossAdded  time.Duration `json:"loss_added_ns,omitempty"`
}

// PeakInterval is the interval a link's peak bandwidth is measured over (LinkWay.PeakRate):
// long enough to hold a few round trips of a LAN, short enough to see a burst.
const PeakInterval = 100 * time.Millisecond

// Delay is a distribution of one-way delays: quantiles accurate to 12.5 % (upper bounds of
// log-linear buckets), mean and standard deviation exact.
type Delay struct {
	// Measured is set when each chunk's delay was recorded; otherwise every chunk had the
	// one delay Mean.
	Measured bool          `json:"measured,omitempty"`
	N        int64         `json:"n"`
	Mean     time.Duration `json:"mean_ns"`
	SD       time.Duration `json:"sd_ns,omitempty"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Max      time.Duration `json:"max_ns"`
}

// Lateness is a distribution of how late the latency link released data, in nanoseconds;
// quantiles are accurate to 12.5 % (upper bounds of log-linear buckets). A release that left
// early counts as on time (0) in the quantiles, and as early (negative) in the mean.
type Lateness struct {
	N int64 `json:"n"`
	// Mean is exact, early releases included (0 for runs stored before it was recorded):
	// throughput answers to the mean RTT, so the mean places the run on the RTT axis
	// (analysis.AchievedRTT).
	Mean time.Duration `json:"mean_ns,omitempty"`
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
}

// Server describes the database server the run measured, as read back from it.
type Server struct {
	Engine string `json:"engine"`
	// Target is a managed server's name or an external DSN with its password removed.
	Target        string            `json:"target"`
	Managed       bool              `json:"managed"`
	Version       string            `json:"version"`
	Settings      map[string]string `json:"settings,omitempty"`
	DatabaseBytes int64             `json:"database_bytes"`
	// MemoryLimit is the memory limit, in bytes, that the managed server ran under, read
	// back from its memory cgroup as the kernel held it (managed.MemoryLimit); 0 for a
	// server with the machine's memory.
	MemoryLimit int64 `json:"memory_limit,omitempty"`
}

// Client describes the machine and build that drove the run.
type Client struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Kernel   string `json:"kernel"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	// Procs is the Go runtime's GOMAXPROCS during the run: how many threads ran dblat's Go
	// code at once (GOMAXPROCS in the environment sets it; by default Cores). With fewer
	// the client costs less CPU, since the runtime stops waking a spare thread on every
	// wake-up from idle, and its terminals queue for the ones it has. 0 for runs stored
	// before it was recorded.
	Procs        int    `json:"procs,omitempty"`
	MemoryBytes  int64  `json:"memory_bytes"`
	GoVersion    string `json:"go_version"`
	DblatVersion string `json:"dblat_version"`
	PID          int    `json:"pid"`
	// CPUSeconds is the user+system CPU dblat itself used during the measurement window.
	CPUSeconds float64 `json:"cpu_seconds"`
	// CPULatencyHold is set when dblat held the CPUs out of deep idle states during the run
	// (/dev/cpu_dma_latency at 0): every process on the machine, the database server
	// included, then wakes faster, so runs with and without it do not compare.
	CPULatencyHold bool `json:"cpu_latency_hold,omitempty"`
	// Steal is the share of the client machine's CPU time that its hypervisor took during
	// the window (steal time, /proc/stat): on a shared virtual machine, the time a
	// neighbour took. nil when not measured.
	Steal *float64 `json:"steal,omitempty"`
	// CanaryUs is the median CPU time, in µs, that a fixed piece of work took on the client
	// machine over the run (package signals' host.canary_us): how fast the machine itself
	// ran. Runs whose canaries differ by more than their noise ran on a machine of another
	// speed. 0 when not measured.
	CanaryUs float64 `json:"canary_us,omitempty"`
	// Pressure says whether the machine had pressure stall information (/proc/pressure),
	// by which a disturbed run's waits for the disk, memory and CPU are told; nil for runs
	// stored before it was recorded.
	Pressure *bool `json:"pressure,omitempty"`
}

// Summary holds the run-wide figures over the measurement window (warm-up excluded).
type Summary struct {
	// Metric names the workload's headline figure: MetricNOPM or MetricTPS. Runs stored
	// before it was recorded have "" (see MetricOf).
	Metric string `json:"metric,omitempty"`
	// Elapsed is the measured window actually achieved.
	Elapsed time.Duration `json:"elapsed"`
	// Warmup is the warm-up the run had before its window: Params.Warmup for a fixed one,
	// what the steady-state rule chose for an automatic one (Params.WarmupAuto; package
	// runner), up to its ceiling. Runs stored before it was recorded read back their
	// Params.Warmup.
	Warmup    time.Duration `json:"warmup_ns,omitempty"`
	Committed int64         `json:"committed"`
	// Rollbacks are designed rollbacks (TPC-C New-Order 1 %), not errors.
	Rollbacks int64            `json:"rollbacks"`
	Errors    map[string]int64 `json:"errors,omitempty"` // by engine.ErrorClass name
	// ErrorExamples holds, per error class, the first few distinct messages seen.
	ErrorExamples map[string][]string `json:"error_examples,omitempty"`
	// TPS is completed transactions per second: commits plus designed rollbacks, which TPC-C
	// counts as completed (clause 2.4.2.3). TPM is the same per minute.
	TPS float64 `json:"tps"`
	TPM float64 `json:"tpm"`
	// NOPM is committed New-Order transactions per minute (TPC-C only, else 0).
	NOPM float64 `json:"nopm"`
	// Retries counts the tries beyond the first of the transactions that ended in the
	// window (Params.MaxTries); Retried the transactions that needed more than one.
	// Transactions that still failed after MaxTries tries are counted in Errors.
	Retries int64 `json:"retries,omitempty"`
	Retried int64 `json:"retried,omitempty"`
	// Late counts transactions that ended in the window with a response time above
	// Params.LatencyLimit (0 without a limit).
	Late int64 `json:"late,omitempty"`

	// Open-loop figures (Params.Rate > 0), over the arrivals whose intended start fell in
	// the window: Offered were due; Skipped were picked up later than the latency limit and
	// not run; Backlog were neither started nor skipped when the window ended. The others
	// started: AchievedRate is their number per second of the window.
	Offered      int64   `json:"offered,omitempty"`
	Skipped      int64   `json:"skipped,omitempty"`
	Backlog      int64   `json:"backlog,omitempty"`
	AchievedRate float64 `json:"achieved_rate,omitempty"`
	// Overload marks an open-loop run as an overload point: the offered rate was not
	// sustained (arrivals were skipped, or more than OverloadShortfall of them were left
	// unstarted), so its response times measure a backlog, not the server at that rate.
	Overload bool `json:"overload,omitempty"`
}

// Counted reports whether r's figures count in its cell's and a comparison's: it finished
// and no study set it aside as disturbed.
func (r *Run) Counted() bool { return r.Status == StatusFinished && r.SetAside == "" }

// WarmupHad is the warm-up r had before its window: Summary.Warmup, or for a run recorded
// without it (an export from before, a run that never started) its Params.Warmup.
func (r *Run) WarmupHad() time.Duration {
	if r.Summary.Warmup == 0 && !r.Params.WarmupAuto {
		return r.Params.Warmup
	}
	return r.Summary.Warmup
}

// OverloadShortfall is the share of an open-loop window's arrivals that may be left
// unstarted at its end before the run is an overload point: the 1 % a rate target is held
// to. (A run that keeps up leaves only the arrivals of its last schedule lag unstarted.)
const OverloadShortfall = 0.01

// IsOverload applies the overload rule to open-loop figures: arrivals were skipped, or more
// than OverloadShortfall of the offered ones (and more than one) were left unstarted.
func IsOverload(offered, skipped, backlog int64) bool {
	return skipped > 0 || (backlog > 1 && float64(backlog) > OverloadShortfall*float64(offered))
}

// TxSummary holds the figures for one transaction type over the measurement window.
// Latencies are in microseconds. Three times are kept per transaction: the service time
// (MeanUs … MaxUs, Hist) runs from checking out a connection for the first try to the end
// of the last; the response time (Resp…) from the intended start to the end; the schedule
// lag (Lag…) from the intended start to the checkout. Response = lag + service. The
// intended start is the arrival's time on an open-loop schedule, the end of the keying time
// under think times (previous end + think + keying), and otherwise the moment the terminal
// asked for a connection (the lag is then the pool wait).
type TxSummary struct {
	Type      string           `json:"type"`
	Committed int64            `json:"committed"`
	Rollbacks int64            `json:"rollbacks"`
	Errors    map[string]int64 `json:"errors,omitempty"`
	MeanUs    float64          `json:"mean_us"`
	P50Us     int64            `json:"p50_us"`
	P90Us     int64            `json:"p90_us"`
	P95Us     int64            `json:"p95_us"`
	P99Us     int64            `json:"p99_us"`
	P999Us    int64            `json:"p999_us"`
	MaxUs     int64            `json:"max_us"`
	// WaitMeanUs and WaitP99Us describe the time spent waiting for a pooled connection.
	WaitMeanUs float64 `json:"wait_mean_us"`
	WaitP99Us  int64   `json:"wait_p99_us"`
	// Wire cost per committed transaction, measured on the client's connection (zero when
	// the connections were not metered): round trips (mean, p50, p99), bytes and writes.
	RoundTrips    float64 `json:"round_trips"`
	RoundTripsP50 int64   `json:"round_trips_p50"`
	RoundTripsP99 int64   `json:"round_trips_p99"`
	BytesUp       float64 `json:"bytes_up"`
	BytesDown     float64 `json:"bytes_down"`
	WritesUp      float64 `json:"writes_up"`
	// Hist and WaitHist are encoded HDR histogram snapshots (base64 V2 compressed), so
	// percentiles can be recomputed and repetitions merged later.
	Hist     string `json:"hist,omitempty"`
	WaitHist string `json:"wait_hist,omitempty"`
	// Retries counts tries beyond the first; Retried the transactions that needed more
	// than one (Summary.Retries).
	Retries int64 `json:"retries,omitempty"`
	Retried int64 `json:"retried,omitempty"`
	// Response time from the intended start (microseconds): mean, percentiles, maximum.
	RespMeanUs float64 `json:"resp_mean_us,omitempty"`
	RespP50Us  int64   `json:"resp_p50_us,omitempty"`
	RespP90Us  int64   `json:"resp_p90_us,omitempty"`
	RespP99Us  int64   `json:"resp_p99_us,omitempty"`
	RespMaxUs  int64   `json:"resp_max_us,omitempty"`
	// Schedule lag, intended start to connection checkout (microseconds).
	LagMeanUs float64 `json:"lag_mean_us,omitempty"`
	LagP99Us  int64   `json:"lag_p99_us,omitempty"`
	LagMaxUs  int64   `json:"lag_max_us,omitempty"`
	// RespHist and LagHist are encoded HDR histograms like Hist; "" for runs stored before
	// they were recorded.
	RespHist string `json:"resp_hist,omitempty"`
	LagHist  string `json:"lag_hist,omitempty"`
}

// Sample holds one interval's figures for one transaction type (Type "" = all types).
type Sample struct {
	// Offset is the end of the interval measured from the start of the measurement window;
	// warm-up intervals have negative offsets.
	Offset    time.Duration `json:"offset"`
	Type      string        `json:"type"`
	Committed int64         `json:"committed"`
	Errors    int64         `json:"errors"`
	P50Us     int64         `json:"p50_us"`
	P99Us     int64         `json:"p99_us"`
	MaxUs     int64         `json:"max_us"`
	// RespP99Us is the interval's 99th percentile of response time (from the intended
	// start); P50Us … MaxUs are service times.
	RespP99Us int64 `json:"resp_p99_us,omitempty"`
	// StallUs is, in the sample of all types (Type ""), the longest time within the
	// interval during which no transaction ended at all: every terminal waiting at once.
	// A stall that spans intervals counts in each as far as it had reached; 0 in the
	// samples of single types and in runs stored before it was recorded.
	StallUs int64 `json:"stall_us,omitempty"`
}

// MeanOf is the mean of two groups of a and b values whose means are ma and mb.
func MeanOf(ma time.Duration, a int64, mb time.Duration, b int64) time.Duration {
	if a+b == 0 {
		return 0
	}
	return time.Duration((float64(ma)*float64(a) + float64(mb)*float64(b)) / float64(a+b))
}
