package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestLatencyWordsAgree: the tables, charts and notes name the time they show. A
// closed-loop report shows service times: its tables were titled "pooled response time"
// while its note said "They are service times".
func TestLatencyWordsAgree(t *testing.T) {
	for _, c := range []struct {
		latency    string
		want, not  string
		chartTitle string
	}{
		{LatencyService, "service time", "response time", "Service time"},
		{LatencyResponse, "response time", "service time (ms) and wire", "Response time"},
	} {
		in := fixInput(t)
		in.Options.Latency = c.latency
		r, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		var txt, html bytes.Buffer
		if err := WriteText(&txt, r); err != nil {
			t.Fatal(err)
		}
		titles := regexp.MustCompile(`(?m)^Transaction \w+: .*$`).FindAllString(txt.String(), -1)
		if len(titles) == 0 {
			t.Fatalf("%s: no transaction tables in the text report", c.latency)
		}
		for _, title := range titles {
			if !strings.Contains(title, c.want) || strings.Contains(title, c.not) {
				t.Errorf("%s report: table title %q should name the %s", c.latency, title, c.want)
			}
		}
		for _, n := range r.Notes {
			if strings.Contains(n, "They are service times") && strings.Contains(n, "Response-time") {
				t.Errorf("%s report: a note calls service times response times: %s", c.latency, n)
			}
		}
		for _, ch := range r.Charts {
			if ch.Kind == ChartPercentiles && (!strings.HasPrefix(ch.Title, c.chartTitle) || !strings.HasPrefix(ch.Y.Label, strings.ToLower(c.chartTitle))) {
				t.Errorf("%s report: chart %q with axis %q", c.latency, ch.Title, ch.Y.Label)
			}
		}
		if err := WriteHTML(&html, r); err != nil {
			t.Fatal(err)
		}
		if h := html.String(); !strings.Contains(h, "<h2>"+c.chartTitle+"</h2>") ||
			c.latency == LatencyService && strings.Contains(h, "pooled response-time percentiles") {
			t.Errorf("%s report: the HTML section and table text should name the %s", c.latency, c.want)
		}
	}
}
