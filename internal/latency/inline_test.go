package latency

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestLinkDial: in-process conns echo through every kind of link, take at least the
// requested RTT, are counted like accepted ones, and end when the link closes.
func TestLinkDial(t *testing.T) {
	for _, lc := range linkConfigs {
		t.Run(lc.name, func(t *testing.T) {
			s := startServer(t, echo)
			l := startLink(t, s.addr(), lc.cfg)
			c, err := l.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, pass := c.(*passConn); pass != (lc.cfg.AddedRTT() == 0) {
				t.Errorf("conn %T for %+v", c, lc.cfg)
			}
			buf := make([]byte, 5)
			for i := range 10 {
				msg := fmt.Sprintf("msg%02d", i)
				start := time.Now()
				if _, err := c.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
					t.Fatalf("got %q, %v", buf, err)
				}
				if d, want := time.Since(start), lc.cfg.AddedRTT()-lc.cfg.Jitter*2; d < want {
					t.Errorf("round trip %d took %v, want at least %v", i, d, want)
				}
			}
			if st := l.Stats(); st.Active != 1 || st.Accepted != 1 {
				t.Errorf("stats while open %+v", st)
			}
			c.Close()
			waitFor(t, func() bool { return l.Stats().Active == 0 })
			if got := l.Totals(); got.RoundTrips != 10 || got.BytesUp != 50 || got.BytesDown != 50 {
				t.Errorf("totals %+v, want 10 round trips and 50 bytes each way", got)
			}

			c, err = l.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			l.Close()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Read(buf); err == nil {
				t.Error("read from an in-process conn after the link closed")
			}
			if _, err := l.Dial(context.Background()); err == nil {
				t.Error("Dial after Close succeeded")
			}
		})
	}
}

// TestLinkDialUpstreamDown: the error names the upstream.
func TestLinkDialUpstreamDown(t *testing.T) {
	s := startServer(t, echo)
	l := startLink(t, s.addr(), Config{RTT: time.Millisecond})
	s.stop()
	if _, err := l.Dial(context.Background()); err == nil || !strings.Contains(err.Error(), "upstream "+s.addr()+" unreachable") {
		t.Errorf("Dial to a stopped upstream: %v", err)
	}
}

// TestCalibrateInline: in-process conns get the requested RTT as precisely as accepted ones
// (same tolerance and attempts as TestCalibrateAccuracy).
func TestCalibrateInline(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is meaningless under the race detector")
	}
	const rtt = time.Millisecond
	tol := 200 * time.Microsecond
	var errs []time.Duration
	for range 3 {
		cal, err := Calibrate(context.Background(), Config{RTT: rtt}, CalibrateOptions{Samples: 200, Inline: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(cal)
		errs = append(errs, cal.Error.P50)
		if e := cal.Error.P50; e <= tol && e >= -tol {
			return
		}
	}
	t.Errorf("error p50 %v in 3 attempts, want within ±%v", errs, tol)
}
