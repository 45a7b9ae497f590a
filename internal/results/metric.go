package results

import "math"

// Metric names of the throughput figure by which a study's runs are compared.
const (
	MetricNOPM = "NOPM" // TPC-C New-Order transactions committed per minute
	MetricTPS  = "TPS"  // transactions completed per second
)

// MetricOf returns the throughput metric by which runs compare: the headline figure each
// run recorded (Summary.Metric, declared by its workload) when they all agree, else
// MetricTPS, which every run has. Runs stored before the metric was recorded count as
// MetricNOPM when they are TPC-C, the only workload whose headline was NOPM then.
func MetricOf(runs []Run) string {
	if len(runs) == 0 {
		return MetricTPS
	}
	metric := ""
	for i := range runs {
		m := runs[i].Summary.Metric
		if m == "" {
			m = MetricTPS
			if runs[i].Params.Workload == "tpcc" {
				m = MetricNOPM
			}
		}
		if metric != "" && m != metric {
			return MetricTPS
		}
		metric = m
	}
	return metric
}

// MetricValue returns r's figure of metric: Summary.NOPM for MetricNOPM, else Summary.TPS.
func MetricValue(r *Run, metric string) float64 {
	if metric == MetricNOPM {
		return r.Summary.NOPM
	}
	return r.Summary.TPS
}

// Resolution is the standard deviation that counting alone leaves in r's figure of metric,
// however alike its repeats: the window's edges cut each terminal's transaction in flight,
// whose end falls inside or outside by the phase the terminal happened to be in, so each
// terminal's count is one of two neighbours (a variance of at most ¼), and the window's
// count of k transactions of the metric's kind is uncertain by √terminals/2. Its share of
// the figure is √terminals / (2k); with nothing counted it is the figure itself. Repeats
// that agree exactly (the same seed, a link that makes every transaction last as long) are
// known to no better than this. A run whose window is not recorded has no resolution (0).
func Resolution(r *Run, metric string) float64 {
	if r.Summary.Elapsed <= 0 {
		return 0
	}
	v := MetricValue(r, metric)
	k := v * r.Summary.Elapsed.Seconds()
	if metric == MetricNOPM {
		k /= 60
	}
	terminals := max(r.Params.Terminals, 1)
	if k < 1 {
		return v
	}
	return v * math.Sqrt(float64(terminals)) / (2 * k)
}
