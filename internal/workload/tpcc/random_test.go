package tpcc

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/workload"
)

// nurandExact returns the exact distribution of NURand(A, C, x, y) by enumerating every
// equally likely pair (random(0, A), random(x, y)) of §2.1.6.
func nurandExact(a, c, x, y int) []float64 {
	p := make([]float64, y-x+1)
	w := 1 / float64((a+1)*(y-x+1))
	for r1 := 0; r1 <= a; r1++ {
		for r2 := x; r2 <= y; r2++ {
			p[(((r1 | r2) + c) % (y - x + 1))] += w
		}
	}
	return p
}

// TestNURandMatchesDefinition draws NURand many times and compares the frequencies with
// the exact distribution of §2.1.6 (a chi-square test at a fixed seed), and checks that
// the distribution really is non-uniform.
func TestNURandMatchesDefinition(t *testing.T) {
	for _, tc := range []struct{ a, c, x, y int }{
		{aCLast, 0, 0, 999}, {aCLast, 223, 0, 999}, {aCID, 259, 1, 3000}, {aCID, 1023, 1, 3000},
	} {
		exact := nurandExact(tc.a, tc.c, tc.x, tc.y)
		r := workload.NewRand(42, "nurand-test", tc.a, tc.c)
		const draws = 2_000_000
		counts := make([]float64, len(exact))
		for range draws {
			v := nurand(r, tc.a, tc.c, tc.x, tc.y)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d, %d, %d) with C=%d = %d, out of range", tc.a, tc.x, tc.y, tc.c, v)
			}
			counts[v-tc.x]++
		}
		chi2, df := 0.0, 0
		for i, p := range exact {
			if p == 0 {
				if counts[i] != 0 {
					t.Errorf("value %d has probability 0 but was drawn", i+tc.x)
				}
				continue
			}
			e := p * draws
			chi2 += (counts[i] - e) * (counts[i] - e) / e
			df++
		}
		// The chi-square statistic has mean df-1 and standard deviation sqrt(2(df-1)); six
		// standard deviations is a bound a correct generator never reaches at this seed.
		if limit := float64(df) + 6*math.Sqrt(2*float64(df)); chi2 > limit {
			t.Errorf("NURand(%d, %d, %d) C=%d: chi-square %.0f over %d cells, above %.0f", tc.a, tc.x, tc.y, tc.c, chi2, df, limit)
		}
		lo, hi := math.Inf(1), 0.0
		for _, p := range exact {
			lo, hi = math.Min(lo, p), math.Max(hi, p)
		}
		if hi < 4*lo {
			t.Errorf("NURand(%d, %d, %d): max/min probability %.1f, want clearly non-uniform", tc.a, tc.x, tc.y, hi/lo)
		}
	}
}

func TestNURandItemRange(t *testing.T) {
	r := workload.NewRand(1, "item-range")
	var sum float64
	const n = 200000
	for range n {
		v := nurand(r, aOLIID, 5000, 1, numItems)
		if v < 1 || v > numItems {
			t.Fatalf("OL_I_ID %d out of [1..100000]", v)
		}
		sum += float64(v)
	}
	if mean := sum / n; math.Abs(mean-50000) > 2000 {
		t.Errorf("mean OL_I_ID %.0f, want about 50,000", mean)
	}
}

func TestValidCDelta(t *testing.T) {
	for _, tc := range []struct {
		load, run int
		ok        bool
	}{
		{0, 64, false}, {0, 65, true}, {100, 35, true}, {100, 36, false}, {0, 96, false}, {0, 112, false},
		{200, 104, false}, {200, 88, false}, {0, 119, true}, {0, 120, false}, {150, 150, false}, {255, 136, true},
	} {
		if got := validCDelta(tc.load, tc.run); got != tc.ok {
			t.Errorf("validCDelta(%d, %d) = %v, want %v", tc.load, tc.run, got, tc.ok)
		}
	}
}

// TestCRunDeltaRule checks §2.1.6.1 for every possible C-Load and many run seeds.
func TestCRunDeltaRule(t *testing.T) {
	for cLoad := 0; cLoad <= aCLast; cLoad++ {
		for seed := int64(0); seed < 20; seed++ {
			c := newRunConstants(seed, cLoad)
			if !validCDelta(cLoad, c.cLast) {
				t.Fatalf("C-Load %d, seed %d: C-Run %d violates the delta rule", cLoad, seed, c.cLast)
			}
			if c.cID < 0 || c.cID > aCID || c.cItem < 0 || c.cItem > aOLIID {
				t.Fatalf("C constants out of [0..A]: %+v", c)
			}
		}
	}
	if a, b := newRunConstants(1, 7), newRunConstants(1, 7); a != b {
		t.Error("run constants not reproducible")
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int]string{371: "PRICALLYOUGHT", 40: "BARPRESBAR", 0: "BARBARBAR", 999: "EINGEINGEING"} {
		if got := lastName(n); got != want {
			t.Errorf("lastName(%d) = %q, want %q", n, got, want)
		}
	}
	for n := range 1000 {
		if l := len(lastName(n)); l > 15 {
			t.Errorf("lastName(%d) has %d characters, more than C_LAST's 16 allow minus one", n, l)
		}
	}
}

func TestTextPool(t *testing.T) {
	p := newTextPool(7)
	if p2 := newTextPool(7); *p2 != *p {
		t.Fatal("text pool not reproducible")
	}
	r := workload.NewRand(7, "pool-test")
	alnumRE := regexp.MustCompile(`^[0-9A-Za-z]*$`)
	lengths := map[int]int{}
	for range 100000 {
		s := p.aString(r, 14, 24)
		if len(s) < 14 || len(s) > 24 || !alnumRE.MatchString(s) {
			t.Fatalf("aString(14, 24) = %q", s)
		}
		lengths[len(s)]++
	}
	if len(lengths) != 11 {
		t.Errorf("aString(14, 24) produced %d distinct lengths, want 11", len(lengths))
	}
	if s := p.nString(r, 16); !regexp.MustCompile(`^[0-9]{16}$`).MatchString(s) {
		t.Errorf("nString(16) = %q", s)
	}
	if s := p.letterString(r, 24); !regexp.MustCompile(`^[A-Za-z]{24}$`).MatchString(s) {
		t.Errorf("letterString(24) = %q", s)
	}
	if z := zip(r); !regexp.MustCompile(`^[0-9]{4}11111$`).MatchString(z) {
		t.Errorf("zip = %q", z)
	}
	if zips[42] != "004211111" {
		t.Errorf("zips[42] = %q", zips[42])
	}
	// I_DATA/S_DATA: "ORIGINAL" in 10 % of rows (§4.3.3.1), within ±5 % of the target
	// count; the lengths stay [26..50].
	orig := 0
	const n = 100000
	for range n {
		s := p.dataString(r)
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("dataString length %d", len(s))
		}
		if strings.Contains(s, "ORIGINAL") {
			orig++
		}
	}
	if orig < 9500 || orig > 10500 {
		t.Errorf("ORIGINAL in %d of %d rows, want 9,500..10,500", orig, n)
	}
}

func TestThinkTime(t *testing.T) {
	r := workload.NewRand(3, "think")
	const mean = 12 * time.Second
	var sum time.Duration
	const n = 200000
	for range n {
		d := thinkTime(r, mean)
		if d < 0 || d > 10*mean {
			t.Fatalf("think time %v outside [0, 10 × mean]", d)
		}
		sum += d
	}
	// The mean of a negative exponential truncated at 10μ is μ(1 - e^-10) ≈ μ.
	if got := sum / n; got < mean*98/100 || got > mean*102/100 {
		t.Errorf("mean think time %v, want about %v", got, mean)
	}
}
