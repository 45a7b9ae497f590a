package results

// Metric names of the throughput figure by which a study's runs are compared.
const (
	MetricNOPM = "NOPM" // TPC-C New-Order transactions committed per minute
	MetricTPS  = "TPS"  // transactions completed per second
)

// MetricOf returns the throughput metric of runs: MetricNOPM when every run is TPC-C, else
// MetricTPS.
func MetricOf(runs []Run) string {
	if len(runs) == 0 {
		return MetricTPS
	}
	for i := range runs {
		if runs[i].Params.Workload != "tpcc" {
			return MetricTPS
		}
	}
	return MetricNOPM
}

// MetricValue returns r's figure of metric: Summary.NOPM for MetricNOPM, else Summary.TPS.
func MetricValue(r *Run, metric string) float64 {
	if metric == MetricNOPM {
		return r.Summary.NOPM
	}
	return r.Summary.TPS
}
