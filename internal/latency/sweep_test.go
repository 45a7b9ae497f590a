package latency

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestSweepCountsLevelsAndStops: Sweep calibrates the levels in order, shows each to
// Level, counts them, and stops at Level's error. It judges no timing (the verdicts are
// the link's accuracy, which BenchmarkAccuracy measures).
func TestSweepCountsLevelsAndStops(t *testing.T) {
	levels := []SweepLevel{{Config: Config{RTT: time.Millisecond}, Conns: 1}, {Config: Config{RTT: time.Millisecond}, Conns: 2}}
	var conns []int
	missed := 0
	res, err := Sweep(context.Background(), SweepOptions{Levels: levels, Samples: 20, Inline: true,
		Level: func(cal *ShapeCalibration, ok bool) error {
			conns = append(conns, cal.Options.Conns)
			if ok != cal.OnTarget() {
				t.Errorf("Level was told %v, OnTarget says %v", ok, cal.OnTarget())
			}
			if !ok {
				missed++
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Levels != 2 || res.Missed != missed || len(conns) != 2 || conns[0] != 1 || conns[1] != 2 {
		t.Fatalf("result %+v, levels shown with %v connections, %d missed", res, conns, missed)
	}
	stop := errors.New("stop")
	res, err = Sweep(context.Background(), SweepOptions{Levels: levels, Samples: 20, Inline: true,
		Level: func(*ShapeCalibration, bool) error { return stop }})
	if !errors.Is(err, stop) || res.Levels != 1 {
		t.Fatalf("a Level error should end the sweep after its level: %+v, %v", res, err)
	}
}

func TestSweepDefaults(t *testing.T) {
	for _, c := range []struct {
		lv   SweepLevel
		want int
	}{
		{SweepLevel{Config{}, 1}, 2000},                                       // 0 RTT: paced at 10,000/s, capped at 2000
		{SweepLevel{Config{RTT: 100 * time.Millisecond}, 1}, 100},             // 50 pings in 5 s: at least 100
		{SweepLevel{Config{RTT: 10 * time.Millisecond}, 2}, 1000},             // 500 pings per connection in 5 s
		{SweepLevel{Config{RTT: 100 * time.Millisecond, Jitter: 1}, 1}, 4000}, // jitter: at least 4000
	} {
		opts := CalibrateOptions{Conns: c.lv.Conns}
		if got := SweepSamples(c.lv, opts); got != c.want {
			t.Errorf("SweepSamples(%+v) = %d, want %d", c.lv, got, c.want)
		}
	}
	if got := SweepBulk(Config{}); got != 64<<10 {
		t.Errorf("SweepBulk without bandwidth = %d, want 64 KiB", got)
	}
	if got := SweepBulk(Config{BandwidthUp: 1 << 20, BandwidthDown: 3 << 20}); got != 6<<20 {
		t.Errorf("SweepBulk at 3 MiB/s = %d, want two seconds' worth", got)
	}
	if got := SweepBulk(Config{BandwidthDown: 1 << 30}); got != 256<<20 {
		t.Errorf("SweepBulk at 1 GiB/s = %d, want the 256 MiB cap", got)
	}
}

// TestEchoProcess starts this test binary as the echo server of a process of its own
// (ServeEchoProcess), echoes through it, and stops it by closing its input.
func TestEchoProcess(t *testing.T) {
	if os.Getenv("DBLAT_LATENCY_ECHO_CHILD") == "1" {
		if err := ServeEchoProcess(os.Stdin, os.Stdout); err != nil {
			t.Fatal(err)
		}
		return
	}
	addr, stop, err := startEchoProcess(func() (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEchoProcess$")
		cmd.Env = append(os.Environ(), "DBLAT_LATENCY_ECHO_CHILD=1")
		cmd.Stderr = os.Stderr
		return cmd, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo: %q, %v", buf, err)
	}
	stop()
	// The process closed its connections as it exited.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(buf); err == nil {
		t.Fatal("the echo server's connection is still open after stop")
	}
	c.Close()
}
