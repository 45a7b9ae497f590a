package option

import (
	"strings"
	"testing"
)

// TestCanonical: one rule per kind, whoever wrote the value (a flag, a study file, a stored
// run): the booleans' spellings, whole numbers within Min, durations with units, closed sets.
func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		o        Option
		in, want string
		err      string
	}{
		{Option{Kind: Bool}, "yes", "true", ""},
		{Option{Kind: Bool}, " On ", "true", ""},
		{Option{Kind: Bool}, "0", "false", ""},
		{Option{Kind: Bool}, "F", "false", ""},
		{Option{Kind: Bool}, "maybe", "", `must be true or false, got "maybe"`},
		{Option{Kind: Int, Min: 1}, "0", "", "must be at least 1, got 0"},
		{Option{Kind: Int}, "-2", "", "must not be negative, got -2"},
		{Option{Kind: Int, Zero: "one per terminal"}, "0", "0", ""},
		{Option{Kind: Int, Min: Unbounded}, "-7", "-7", ""},
		{Option{Kind: Int}, "x", "", `must be a whole number, got "x"`},
		{Option{Kind: Duration}, "1000us", "1ms", ""},
		{Option{Kind: Duration, Min: 1}, "0", "", "must be positive, got 0"},
		{Option{Kind: Duration}, "-5s", "", "must not be negative, got -5s"},
		{Option{Kind: Duration}, "5", "", "needs a unit: 5ms or 5s?"},
		{Option{Kind: Rate}, "500/s", "500", ""},
		{Option{Kind: Rate, Zero: "a closed loop"}, "-1", "", "must be a positive number of transactions per second (0: a closed loop), got -1"},
		{Option{Kind: String, Values: []string{"client", "batched", "procedure"}}, "bached", "", `must be client, batched or procedure, got "bached" (did you mean batched?)`},
		{Option{Kind: String, Values: []string{"restore", "keep"}}, "keep", "keep", ""},
	} {
		got, err := tc.o.Canonical(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v %q: error %v, want %q", tc.o.Kind, tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%v %q: %q, %v; want %q", tc.o.Kind, tc.in, got, err, tc.want)
		}
	}
}

// TestFlagName: a flag is the name with dashes unless declared otherwise.
func TestFlagName(t *testing.T) {
	for _, tc := range []struct {
		o    Option
		want string
	}{
		{Option{Name: "max_tries"}, "max-tries"},
		{Option{Name: "scripts", Flag: "file"}, "file"},
		{Option{Name: "warehouses", Flag: NoFlag}, ""},
	} {
		o, want := tc.o, tc.want
		if got := o.FlagName(); got != want {
			t.Errorf("%s: flag %q, want %q", o.Name, got, want)
		}
	}
}

// TestSize: sizes in binary units as PostgreSQL's and MariaDB's settings read them, written
// back in the largest unit that divides them; a number without a unit is refused.
func TestSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		back string
		err  string
	}{
		{"512MB", 512 << 20, "512MB", ""},
		{" 2gb ", 2 << 30, "2GB", ""},
		{"1.5GiB", 1536 << 20, "1536MB", ""},
		{"64k", 64 << 10, "64kB", ""},
		{"0", 0, "0", ""},
		{"512", 0, "", "needs a unit: 512MB or 512GB?"},
		{"lots", 0, "", `is not a size: "lots"`},
		{"3PB", 0, "", `is not a size: "3PB"`},
	} {
		got, err := ParseSize(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want || FormatSize(got) != tc.back):
			t.Errorf("%q: %d (%v) written %q; want %d, %q", tc.in, got, err, FormatSize(got), tc.want, tc.back)
		}
	}
}
