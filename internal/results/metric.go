package results

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
