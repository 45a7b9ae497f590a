package latency

import (
	"testing"
	"time"
)

func TestHistogram(t *testing.T) {
	prev := int64(0)
	for i := 0; i < histBuckets; i++ {
		u := histUpper(i)
		if u <= prev {
			t.Fatalf("bucket %d upper %d <= %d", i, u, prev)
		}
		if i < histBuckets-1 && (histIndex(u-1) != i || histIndex(u) != i+1) {
			t.Fatalf("bucket %d: index(%d)=%d index(%d)=%d", i, u-1, histIndex(u-1), u, histIndex(u))
		}
		if i > 1 && float64(u-prev)/float64(prev) > 0.126 {
			t.Fatalf("bucket %d wider than 12.5%%", i)
		}
		prev = u
	}
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(int64(i) * int64(time.Microsecond))
	}
	s := h.summary()
	if s.N != 1000 || s.Max != time.Millisecond || s.Mean != 500500*time.Nanosecond {
		t.Fatalf("%+v", s)
	}
	for _, c := range []struct{ got, want time.Duration }{{s.P50, 500 * time.Microsecond}, {s.P99, 990 * time.Microsecond}} {
		if c.got < c.want || float64(c.got) > 1.125*float64(c.want) {
			t.Errorf("quantile %v, want %v..+12.5%%", c.got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	var v []time.Duration
	for i := 1000; i >= 1; i-- {
		v = append(v, time.Duration(i))
	}
	s := summarize(v)
	want := Summary{N: 1000, Min: 1, Mean: 500, P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if summarize(nil).N != 0 {
		t.Error("empty")
	}
}
