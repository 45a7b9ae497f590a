package runner

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// phase is where a run stands on its timeline.
type phase int

const (
	// warmingUp: transactions run and are sampled, none counts in the window's figures.
	warmingUp phase = iota
	// measuring: the window; a transaction that ends now counts.
	measuring
	// draining: no transaction starts; those in flight finish, or are canceled after the
	// drain time-out, and count in no figure.
	draining
)

// timeline takes one run through its phases — warm-up, window, drain — and keeps what the
// phases decide: when the window started and how long it lasted (which the terminals read
// on every transaction, hence atomics), whether it was cut short, the CPU time at its
// start, and the samples an automatic warm-up holds back. It is driven by Session.Run's
// goroutine alone.
type timeline struct {
	cfg   *Config
	rec   *recorder
	types []string
	start time.Time
	phase phase
	// windowStart is when the window starts, in Unix nanoseconds: at the end of a fixed
	// warm-up, or earlier once an automatic one finds throughput steady (steadyAt).
	windowStart atomic.Int64
	// windowEnd is the window's length in nanoseconds, moved earlier when the run is cut.
	windowEnd atomic.Int64
	// cut is set when a drain or a hard stop ended the window before its time.
	cut bool
	// cpuStart, cpuAtWindow and cpuEnd are dblat's CPU time at the start, at the window's
	// start and when the drain began.
	cpuStart, cpuAtWindow, cpuEnd float64
	// counted is how many of the headline figure's transactions the window's samples
	// counted so far (Drive.MinTransactions); nopm indexes the NOPM type in types (-1:
	// every type counts).
	counted int64
	nopm    int
	// perSecond is an automatic warm-up's throughput per sample interval; held are its
	// samples, emitted once the window's start, and with it their offsets, is known.
	perSecond []float64
	held      []func()
	warm      *time.Timer
	window    *time.Timer // ends the window; nil until it starts
}

func newTimeline(cfg *Config, rec *recorder, types []string, start time.Time) *timeline {
	tl := &timeline{cfg: cfg, rec: rec, types: types, start: start, cpuStart: cpuSeconds(), cpuAtWindow: math.NaN(),
		nopm: slices.Index(types, cfg.NOPMType)}
	tl.windowStart.Store(start.Add(cfg.Warmup).UnixNano())
	// A window that runs on until its count is open to its longest while it runs; the
	// terminals stop at its end once it is known (enough).
	tl.windowEnd.Store(int64(cfg.MaxWindow()))
	return tl
}

// windowStartTime is when the window starts (during an automatic warm-up, at the latest).
func (tl *timeline) windowStartTime() time.Time { return time.Unix(0, tl.windowStart.Load()) }

// run takes the run through its warm-up and window: it returns when the window has ended,
// when drain is closed, or when ctx is canceled (a hard stop). The caller stops the
// terminals, then calls drain.
func (tl *timeline) run(ctx context.Context, drain <-chan struct{}) {
	tick := time.NewTicker(tl.cfg.SampleEvery)
	defer tick.Stop()
	tl.warm = time.NewTimer(tl.cfg.Warmup)
	defer tl.warm.Stop()
	var windowDone <-chan time.Time
	overtime := false // past the window's duration, waiting for its count (MinTransactions)
	for {
		select {
		case now := <-tick.C:
			tl.emit(now)
			switch {
			case tl.phase == warmingUp && tl.cfg.WarmupAuto && steadyAt(tl.perSecond):
				windowDone = tl.measure(now)
			case overtime && tl.enough(now):
				return
			}
		case now := <-tl.warm.C:
			if tl.phase == warmingUp {
				windowDone = tl.measure(now)
			}
		case now := <-windowDone:
			if tl.enough(now) {
				return
			}
			windowDone, overtime = nil, true // the count decides, at the samples to come
		case <-drain:
			tl.cutShort()
			return
		case <-ctx.Done():
			// A hard stop: the terminals' context ends with ctx, so the drain does not
			// wait for them; what the window measured until now is kept.
			tl.cutShort()
			return
		}
	}
}

// enough reports whether the window, past its duration at now, may end: it has no count to
// reach (MinTransactions), counted it, or ran its longest (MaxWindow). A window that runs
// on until its count then ends at now, or at its longest.
func (tl *timeline) enough(now time.Time) bool {
	if tl.cfg.MinTransactions <= 0 {
		return true
	}
	elapsed := now.Sub(tl.windowStartTime())
	if tl.counted < int64(tl.cfg.MinTransactions) && elapsed < tl.cfg.MaxWindow() {
		return false
	}
	tl.windowEnd.Store(int64(min(elapsed, tl.cfg.MaxWindow())))
	return true
}

// emit takes the interval's figures from the recorder and hands them to the Samples hook
// (an automatic warm-up's are held back until the window's start is known).
func (tl *timeline) emit(now time.Time) {
	iv := tl.rec.takeInterval(len(tl.types), now)
	if tl.phase == measuring {
		for t, n := range iv.commits {
			if tl.nopm < 0 || t == tl.nopm {
				tl.counted += n
			}
		}
	}
	auto := tl.cfg.WarmupAuto && tl.phase == warmingUp
	if auto {
		var n int64
		for _, c := range iv.commits {
			n += c
		}
		tl.perSecond = append(tl.perSecond, float64(n))
	}
	if tl.cfg.Samples == nil {
		return
	}
	if auto {
		tl.held = append(tl.held, func() { tl.cfg.Samples(samples(iv, tl.types, now.Sub(tl.windowStartTime()))) })
		return
	}
	tl.cfg.Samples(samples(iv, tl.types, now.Sub(tl.windowStartTime())))
}

// measure ends the warm-up and starts the window at now; it returns the channel that says
// when the window is over.
func (tl *timeline) measure(now time.Time) <-chan time.Time {
	tl.phase = measuring
	tl.warm.Stop()
	if now.Before(tl.windowStartTime()) {
		tl.windowStart.Store(now.UnixNano())
	}
	tl.release()
	tl.cpuAtWindow = cpuSeconds()
	if tl.cfg.WindowStart != nil {
		tl.cfg.WindowStart()
	}
	tl.window = time.NewTimer(time.Until(tl.windowStartTime().Add(tl.cfg.Duration)))
	return tl.window.C
}

// release emits the samples an automatic warm-up held back.
func (tl *timeline) release() {
	for _, f := range tl.held {
		f()
	}
	tl.held = nil
}

// cutShort ends the window now (an empty one if it had not started).
func (tl *timeline) cutShort() {
	tl.cut = true
	if tl.phase == warmingUp {
		tl.windowStart.Store(time.Now().UnixNano())
	}
	tl.windowEnd.Store(int64(time.Since(tl.windowStartTime())))
}

// drain enters the drain phase, once no terminal starts another transaction: a run cut
// during its warm-up had an empty window, whose start and end the hooks still hear of.
func (tl *timeline) drain() {
	tl.cpuEnd = cpuSeconds()
	if tl.window != nil {
		tl.window.Stop()
	}
	if tl.phase == warmingUp {
		tl.release()
		tl.cpuAtWindow = tl.cpuStart
		if tl.cfg.WindowStart != nil {
			tl.cfg.WindowStart()
		}
	}
	tl.phase = draining
	if tl.cfg.WindowEnd != nil {
		tl.cfg.WindowEnd()
	}
}

// elapsed is the window's length as it was measured.
func (tl *timeline) elapsed() time.Duration { return max(0, time.Duration(tl.windowEnd.Load())) }

// warmup is the warm-up the run had.
func (tl *timeline) warmup() time.Duration { return max(0, tl.windowStartTime().Sub(tl.start)) }
