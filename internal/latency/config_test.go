package latency

import (
	"testing"
	"time"
)

func TestParseBandwidth(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"100mbit", 12_500_000},
		{"1gbit", 125_000_000},
		{"1Gbit", 125_000_000},
		{"2.5kbit", 313}, // 312.5 rounds half away from zero
		{"1gibit", 134_217_728},
		{"10MB/s", 10_000_000},
		{"10MiB/s", 10 << 20},
		{"500kB/s", 500_000},
		{"100Mb/s", 12_500_000},
		{"64B/s", 64},
		{"0", 0},
		{"", 0},
		{"unlimited", 0},
	} {
		got, err := ParseBandwidth(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseBandwidth(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"100", "100mbps", "10 furlongs", "-1mbit", "x mbit", "1bit", "10XB/s", "NaNmbit"} {
		if v, err := ParseBandwidth(bad); err == nil {
			t.Errorf("ParseBandwidth(%q) = %d, want error", bad, v)
		}
	}
	for _, v := range []int64{12_500_000, 125_000_000, 1_000} {
		s := FormatBandwidth(v)
		if back, err := ParseBandwidth(s); err != nil || back != v {
			t.Errorf("round trip %d -> %q -> %d, %v", v, s, back, err)
		}
	}
}

func TestDistributionNames(t *testing.T) {
	for _, d := range []Distribution{Uniform, Normal, ParetoNormal} {
		got, err := ParseDistribution(d.String())
		if err != nil || got != d {
			t.Errorf("%v: got %v, %v", d, got, err)
		}
	}
	if d, err := ParseDistribution("Pareto-Normal"); err != nil || d != ParetoNormal {
		t.Errorf("Pareto-Normal: %v %v", d, err)
	}
	if _, err := ParseDistribution("pareto"); err == nil {
		t.Error("pareto accepted")
	}
}

func TestConfigSplit(t *testing.T) {
	for _, c := range []struct {
		cfg      Config
		up, down time.Duration
	}{
		{Config{RTT: 10 * time.Millisecond}, 5 * time.Millisecond, 5 * time.Millisecond},
		{Config{RTT: 3}, 1, 2},
		{Config{RTT: time.Second, Up: time.Millisecond}, time.Millisecond, 0},
		{Config{Down: time.Millisecond}, 0, time.Millisecond},
	} {
		up, down := c.cfg.oneWay()
		if up != c.up || down != c.down || c.cfg.AddedRTT() != c.up+c.down {
			t.Errorf("%+v: %v %v", c.cfg, up, down)
		}
	}
	for _, bad := range []Config{{RTT: -1}, {Jitter: -1}, {BandwidthUp: -1}, {QueueLimit: -1}, {Distribution: 7}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	got := Config{RTT: 10 * time.Millisecond, Jitter: time.Millisecond, Distribution: Normal, BandwidthUp: 12_500_000, DelayConnect: true}.String()
	if want := "rtt=10ms jitter=1ms/normal bw-up=100mbit delay-connect"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
