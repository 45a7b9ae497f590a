package results

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestHistRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		values []int64
	}{
		{"empty", nil},
		{"one value", []int64{1234}},
		{"spread", func() []int64 {
			var v []int64
			for i := int64(1); i <= 100_000; i++ {
				v = append(v, i*i%3_000_000+1)
			}
			return v
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := hdrhistogram.New(1, 60_000_000, 3)
			for _, v := range tc.values {
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			s, err := EncodeHist(h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeHist(s)
			if err != nil {
				t.Fatal(err)
			}
			if got.TotalCount() != h.TotalCount() || got.Max() != h.Max() || got.Min() != h.Min() {
				t.Errorf("count/min/max %d/%d/%d, want %d/%d/%d", got.TotalCount(), got.Min(), got.Max(),
					h.TotalCount(), h.Min(), h.Max())
			}
			for _, q := range []float64{50, 90, 95, 99, 99.9, 100} {
				if a, b := got.ValueAtQuantile(q), h.ValueAtQuantile(q); a != b {
					t.Errorf("p%v = %d, want %d", q, a, b)
				}
			}
			// Decoded histograms merge, as repeats of a cell will be.
			if dropped := got.Merge(h); dropped != 0 || got.TotalCount() != 2*h.TotalCount() {
				t.Errorf("merge: dropped %d, count %d", dropped, got.TotalCount())
			}
		})
	}
}

func TestHistErrors(t *testing.T) {
	if _, err := EncodeHist(nil); err == nil {
		t.Error("EncodeHist(nil) succeeded")
	}
	for _, s := range []string{"", "not base64!", "AAAA"} {
		if _, err := DecodeHist(s); err == nil {
			t.Errorf("DecodeHist(%q) succeeded", s)
		}
	}
}
