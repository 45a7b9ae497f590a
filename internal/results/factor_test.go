package results

import (
	"reflect"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", 100 * time.Microsecond: "100µs", 1500 * time.Microsecond: "1.5ms", 20 * time.Millisecond: "20ms",
		2 * time.Second: "2s", 90 * time.Second: "1m30s",
	} {
		if got := spec.FormatDuration(d); got != want {
			t.Errorf("spec.FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if d != 0 {
			if back, err := time.ParseDuration(spec.FormatDuration(d)); err != nil || back != d {
				t.Errorf("%q does not parse back to %v: %v %v", spec.FormatDuration(d), d, back, err)
			}
		}
	}
}

func TestFactorValue(t *testing.T) {
	r := &Run{Params: Params{Drive: spec.Drive{Terminals: 20, Connections: 10}, RTT: 2 * time.Millisecond, Scale: 4, Options: map[string]string{"mode": "batched", "set.shared_buffers": "1GB"}},
		Server: Server{Engine: "postgres"}}
	for key, want := range map[string]string{"rtt": "2ms", "terminals": "20", "connections": "10", "warehouses": "4",
		"engine": "postgres", "opt.mode": "batched", "set.shared_buffers": "1GB", "nonsense": ""} {
		if got := FactorValue(r, key); got != want {
			t.Errorf("FactorValue(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestSortFactorValues(t *testing.T) {
	v := []string{"20ms", "0", "1ms", "100µs"}
	SortFactorValues(v)
	if want := []string{"0", "100µs", "1ms", "20ms"}; !reflect.DeepEqual(v, want) {
		t.Errorf("got %v", v)
	}
	v = []string{"100", "20", "5"}
	SortFactorValues(v)
	if want := []string{"5", "20", "100"}; !reflect.DeepEqual(v, want) {
		t.Errorf("got %v", v)
	}
	// The link's bandwidths, unlimited last, and its losses.
	v = []string{"unlimited", "1gbit", "100mbit", "10mbit", "1mbit"}
	SortFactorValues(v)
	if want := []string{"1mbit", "10mbit", "100mbit", "1gbit", "unlimited"}; !reflect.DeepEqual(v, want) {
		t.Errorf("got %v", v)
	}
	v = []string{"1%", "0", "0.05%", "0.5%"}
	SortFactorValues(v)
	if want := []string{"0", "0.05%", "0.5%", "1%"}; !reflect.DeepEqual(v, want) {
		t.Errorf("got %v", v)
	}
}

// TestFactorKeysAreFields: the factor keys that name run parameters are the keys spec.Fields
// declares them under, factors a study may vary, and FactorValue reads them through it.
func TestFactorKeysAreFields(t *testing.T) {
	r := &Run{Params: Params{Drive: spec.Drive{Terminals: 20, Connections: 10, Duration: time.Minute, Warmup: 10 * time.Second},
		RTT: 2 * time.Millisecond, Scale: 4, Think: true}}
	for key, want := range map[string]string{FactorRTT: "2ms", FactorTerminals: "20", FactorConnections: "10",
		FactorWarehouses: "4", FactorDuration: "1m0s", FactorWarmup: "10s", FactorThink: "true"} {
		f, ok := spec.Lookup(key)
		if !ok || !f.Factor {
			t.Errorf("%q is not a factor of spec.Fields", key)
			continue
		}
		if got := FactorValue(r, key); got != want {
			t.Errorf("FactorValue(%q) = %q, want %q", key, got, want)
		}
	}
}
