package tpcc

import (
	"testing"
	"time"
)

func TestMoneyText(t *testing.T) {
	for v, want := range map[money]string{0: "0.00", 1: "0.01", -1: "-0.01", 1000: "10.00", -1000: "-10.00", 30000000: "300000.00", 123456: "1234.56"} {
		if got := v.String(); got != want {
			t.Errorf("money(%d) = %q, want %q", int64(v), got, want)
		}
	}
	if got, _ := rate(1234).AppendText(nil); string(got) != "0.1234" {
		t.Errorf("rate(1234) = %q", got)
	}
	if got, _ := rate(500).Value(); got != "0.0500" {
		t.Errorf("rate(500).Value() = %v", got)
	}
}

func TestScanFixed(t *testing.T) {
	for _, tc := range []struct {
		src   any
		scale int
		want  int64
		err   bool
	}{
		{"12.34", 2, 1234, false}, {"-10.00", 2, -1000, false}, {"10", 2, 1000, false}, {"0.5", 4, 5000, false},
		{[]byte("300000.00"), 2, 30000000, false}, {"+1.5", 2, 150, false}, {"1.230", 2, 123, false},
		{int64(7), 2, 700, false}, {12.34, 2, 1234, false}, {"1.235", 2, 0, true}, {"abc", 2, 0, true},
		{"", 2, 0, true}, {"-", 2, 0, true}, {"1.2.3", 2, 0, true}, {nil, 2, 0, true}, {true, 2, 0, true},
	} {
		got, err := scanFixed(tc.src, tc.scale)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("scanFixed(%#v, %d) = %d, %v; want %d, error %v", tc.src, tc.scale, got, err, tc.want, tc.err)
		}
	}
	var m money
	if err := m.Scan("-12.30"); err != nil || m != -1230 {
		t.Errorf("money.Scan = %d, %v", m, err)
	}
}

func TestDisplayTime(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		src  any
		want displayTime
	}{
		{nil, displayTime{}}, {now, displayTime{Time: now, Valid: true}},
		{[]byte("2024-01-02 03:04:05"), displayTime{Text: "2024-01-02 03:04:05", Valid: true}},
		{"2024-01-02", displayTime{Text: "2024-01-02", Valid: true}},
	} {
		var d displayTime
		if err := d.Scan(tc.src); err != nil || d != tc.want {
			t.Errorf("Scan(%v) = %+v, %v", tc.src, d, err)
		}
	}
	var d displayTime
	if err := d.Scan(42); err == nil {
		t.Error("Scan(42) accepted")
	}
}
