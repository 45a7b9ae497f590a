package latency

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// SweepLevel is one level of a Sweep: a link's configuration and how many connections
// ping through it at once.
type SweepLevel struct {
	Config Config
	Conns  int
}

// SweepOptions shape a Sweep. Zero fields take the defaults SweepSamples and SweepBulk say.
type SweepOptions struct {
	// Levels are calibrated one after another, in order.
	Levels []SweepLevel
	// Samples is the number of round trips each level measures; 0 chooses per level
	// (SweepSamples).
	Samples int
	// Bulk is the bytes of the bulk transfer each way that checks a bandwidth limit; 0
	// chooses per level (SweepBulk).
	Bulk int64
	// Inline measures the in-process path (CalibrateOptions.Inline).
	Inline bool
	// EchoProcess, when set, makes the command of a process that runs ServeEchoProcess on
	// its standard input and output. Sweep starts it when the levels need more sockets
	// than this process may open (two per connection, and a thousand for the rest), pings
	// it instead of an echo server of its own, and stops it at the end: closing its input,
	// then, if it has not exited within 5 s, killing it (the process Sweep started, by its
	// PID). Nil: the echo server runs in this process whatever the levels.
	EchoProcess func() (*exec.Cmd, error)
	// Level, when set, is shown each level's calibration, and whether it is on target
	// (ShapeCalibration.OnTarget), as soon as it is measured; an error it returns ends the
	// sweep with that error. It is called on Sweep's goroutine.
	Level func(cal *ShapeCalibration, onTarget bool) error
}

// SweepResult is what a Sweep measured, in all.
type SweepResult struct {
	// Levels is the number of levels calibrated, Missed the number of them that missed a
	// target.
	Levels, Missed int
}

// Sweep calibrates each level of o in turn (CalibrateShape), with the numbers of samples
// and bulk bytes SweepSamples and SweepBulk choose where o leaves them out, and counts the
// levels that missed their targets. It blocks until the last level is measured, ctx ends
// or Level fails; on an error the result counts the levels measured before it.
func Sweep(ctx context.Context, o SweepOptions) (SweepResult, error) {
	var res SweepResult
	echoAddr := ""
	if o.EchoProcess != nil && 2*uint64(maxConns(o.Levels))+1000 > openFileLimit() {
		addr, stop, err := startEchoProcess(o.EchoProcess)
		if err != nil {
			return res, fmt.Errorf("start the echo server process: %w", err)
		}
		defer stop()
		echoAddr = addr
	}
	for _, lv := range o.Levels {
		opts := CalibrateOptions{Conns: lv.Conns, Samples: o.Samples, Inline: o.Inline, EchoAddr: echoAddr}
		if opts.Samples == 0 {
			opts.Samples = SweepSamples(lv, opts)
		}
		bulk := o.Bulk
		if bulk == 0 {
			bulk = SweepBulk(lv.Config)
		}
		cal, err := CalibrateShape(ctx, lv.Config, opts, bulk)
		if err != nil {
			return res, err
		}
		ok := cal.OnTarget()
		res.Levels++
		if !ok {
			res.Missed++
		}
		if o.Level != nil {
			if err := o.Level(cal, ok); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// SweepSamples is the number of round trips a Sweep measures at lv, pinging as opts says
// (CalibrateOptions.Interval): enough for a p99.9 at small RTTs (up to 2000, at least 100),
// bounded to about 5 s per level at large ones; with jitter at least 4000, enough delays
// to read its spread within a few per cent.
func SweepSamples(lv SweepLevel, opts CalibrateOptions) int {
	n := max(100, min(2000, int(5*time.Second/opts.Interval(lv.Config.AddedRTT()))*lv.Conns))
	if lv.Config.Jitter > 0 {
		n = max(n, 4000)
	}
	return n
}

// SweepBulk is the bytes of a Sweep's bulk transfer each way at cfg: two seconds' worth of
// its larger bandwidth, at least 64 KiB and at most 256 MiB.
func SweepBulk(cfg Config) int64 {
	bw := max(cfg.BandwidthUp, cfg.BandwidthDown)
	return min(max(2*bw, 64<<10), 256<<20)
}

func maxConns(levels []SweepLevel) int {
	n := 0
	for _, lv := range levels {
		n = max(n, lv.Conns)
	}
	return n
}

// openFileLimit is this process's open-file limit (soft, which Go raises to the hard one).
func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	return lim.Cur
}

// startEchoProcess starts the command's process, that runs ServeEchoProcess, and returns the
// address it listens on and the function that stops it.
func startEchoProcess(command func() (*exec.Cmd, error)) (string, func(), error) {
	cmd, err := command()
	if err != nil {
		return "", nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		stdin.Close() // the server exits at the end of its input
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("no address from the echo server: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// ServeEchoProcess is the echo server of a process of its own (SweepOptions.EchoProcess):
// it echoes on a loopback port (ServeEcho), writes the address and a newline to out, and
// returns when in ends (its parent closed it, or died), once its connections are closed.
func ServeEchoProcess(in io.Reader, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "%s\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	go func() {
		_, _ = io.Copy(io.Discard, in)
		ln.Close()
	}()
	ServeEcho(ln)
	return nil
}
