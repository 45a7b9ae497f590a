package script

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// draws evaluates expr n times on one client seeded with seed and returns the values.
func draws(t *testing.T, expr string, n int, seed uint64) []int64 {
	t.Helper()
	s, err := Parse("draw.sql", []byte(`\set r `+expr))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, n)
	for i := range out {
		c.Begin(s)
		if err := c.Run(context.Background(), nopExecutor{}); err != nil {
			t.Fatal(err)
		}
		out[i] = c.Var("r").AsInt()
	}
	return out
}

// chiSquareAlpha is the significance of the goodness-of-fit tests: a correct generator
// fails one with probability 0.1 % over random seeds. The seeds are fixed, so each test
// gives the same answer every run; a wrong distribution (an off-by-one in a bound, a
// parameter used the wrong way round) fails by a wide margin at these sample sizes.
const chiSquareAlpha = 0.001

// chiSquare tests values in [lo, lo+len(p)) against the probabilities p, and reports
// the statistic with the critical value.
func chiSquare(t *testing.T, name string, values []int64, lo int64, p []float64) {
	t.Helper()
	counts := make([]float64, len(p))
	for _, v := range values {
		i := v - lo
		if i < 0 || i >= int64(len(p)) {
			t.Fatalf("%s: %d is outside [%d, %d]", name, v, lo, lo+int64(len(p))-1)
		}
		counts[i]++
	}
	n := float64(len(values))
	stat, df := 0.0, -1
	for i := range p {
		e := n * p[i]
		if e < 5 {
			t.Fatalf("%s: expected count %.1f in bucket %d is too small for the test", name, e, i)
		}
		stat += (counts[i] - e) * (counts[i] - e) / e
		df++
	}
	crit := distuv.ChiSquared{K: float64(df)}.Quantile(1 - chiSquareAlpha)
	if stat > crit {
		t.Errorf("%s: chi-square %.1f > %.1f (%d degrees of freedom, alpha %g): counts %v", name, stat, crit, df, chiSquareAlpha, counts)
	}
}

func TestRandomDistributions(t *testing.T) {
	const n = 200_000
	const k = 20 // values 1..k
	uniform := make([]float64, k)
	for i := range uniform {
		uniform[i] = 1.0 / k
	}
	// random_exponential(1, k, p): x in [0, 1) has density p·e^(-px)/(1-e^(-p)), value
	// 1 + floor(k·x), so value i has probability (e^(-p(i-1)/k) - e^(-pi/k)) / (1 - e^(-p)).
	exponential := func(p float64) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = (math.Exp(-p*float64(i)/k) - math.Exp(-p*float64(i+1)/k)) / (1 - math.Exp(-p))
		}
		return out
	}
	// random_gaussian(1, k, p): a standard normal z truncated to [-p, p), x = (z+p)/(2p),
	// value 1 + floor(k·x): value i has the normal's mass between -p+2p(i-1)/k and
	// -p+2pi/k, over its mass in [-p, p).
	gaussian := func(p float64) []float64 {
		phi := distuv.UnitNormal.CDF
		out := make([]float64, k)
		for i := range out {
			a, b := -p+2*p*float64(i)/k, -p+2*p*float64(i+1)/k
			out[i] = (phi(b) - phi(a)) / (phi(p) - phi(-p))
		}
		return out
	}
	// random_zipfian(1, n, s): value i with probability i^-s / sum of j^-s for j in 1..n.
	zipfian := func(n int, s float64) []float64 {
		out := make([]float64, n)
		sum := 0.0
		for i := range out {
			out[i] = math.Pow(float64(i+1), -s)
			sum += out[i]
		}
		for i := range out {
			out[i] /= sum
		}
		return out
	}
	for i, c := range []struct {
		expr string
		lo   int64
		p    []float64
		n    int // draws, if not n
	}{
		{fmt.Sprintf("random(1, %d)", k), 1, uniform, 0},
		{fmt.Sprintf("random(-%d, -1)", k), -k, uniform, 0},
		{fmt.Sprintf("random_exponential(1, %d, 2.5)", k), 1, exponential(2.5), 0},
		{fmt.Sprintf("random_exponential(1, %d, 0.2)", k), 1, exponential(0.2), 0},
		{fmt.Sprintf("random_exponential(1, %d, 7)", k), 1, exponential(7), 0},
		{fmt.Sprintf("random_gaussian(1, %d, 2.0)", k), 1, gaussian(2), 0},
		{fmt.Sprintf("random_gaussian(1, %d, 3.5)", k), 1, gaussian(3.5), 0},
		{"random_zipfian(1, 30, 1.5)", 1, zipfian(30, 1.5), 0},
		// s near 1 makes pgbench's rejection method slow (most draws land above n)
		{"random_zipfian(1, 30, 1.001)", 1, zipfian(30, 1.001), 20_000},
		{"random_zipfian(1, 8, 3)", 1, zipfian(8, 3), 0},
		{"random_zipfian(11, 20, 1.2)", 11, zipfian(10, 1.2), 0},
	} {
		draws := draws(t, c.expr, cmp.Or(c.n, n), uint64(1000+i))
		chiSquare(t, c.expr, draws, c.lo, c.p)
	}
}

// TestRandomWideRanges: the bounds are reached and respected at the edges of int64.
func TestRandomWideRanges(t *testing.T) {
	for _, expr := range []string{"random(9223372036854775806, 9223372036854775807)",
		"random(-9223372036854775808, -9223372036854775807)", "random_exponential(-9223372036854775808, -9223372036854775807, 0.1)"} {
		seen := map[int64]int{}
		for _, v := range draws(t, expr, 200, 7) {
			seen[v]++
		}
		if len(seen) != 2 {
			t.Errorf("%s: values %v, want both bounds", expr, seen)
		}
	}
}

// TestPRNGMatchesPgbenchValues pins the first values pgbench 15 drew for
// --random-seed=4242 from the select-only script's random(1, 100000) (as logged by
// pgbench -d), so the generator is checked without a server too.
func TestPRNGMatchesPgbenchValues(t *testing.T) {
	seeds, _ := PgbenchSeeds(4242, 1)
	got := draws(t, "random(1, 100000)", 5, seeds[0])
	if want := []int64{10899, 44056, 86343, 12927, 32672}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want pgbench's %v", got, want)
	}
}
