package report

import (
	"bytes"
	"compress/gzip"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// Stored observations of real applications, as `dblat proxy --rtt 0 --observe FILE` wrote
// them in front of a managed PostgreSQL 15 on a 2-vCPU VM shared with other work (their
// figures are real but noisy: tests assert what must hold for any observation):
//   - observed-tpcc: dblat's own TPC-C, 1 warehouse, 4 terminals for 20 s in client mode:
//     138 shapes, New-Order's split by its number of items (gzipped: its shapes' statements
//     repeat, 783 kB plain);
//   - observed-pgbench-select: pgbench -S -c 4 -j 2 -T 15 at scale 1: one shape, and
//     pgbench's two queries before it starts;
//   - observed-pgbench-tpcb: pgbench's tpcb-like, likewise: one shape of 7 round trips
//     whose last three hold the one branch row's lock (a serial section).
var storedObservations = []string{"observed-tpcc", "observed-pgbench-select", "observed-pgbench-tpcb"}

// storedObservation reads testdata/NAME.json or NAME.json.gz.
func storedObservation(t testing.TB, name string) *observe.Observation {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		b, err = readGzip(path + ".gz")
	}
	if err != nil {
		t.Fatal(err)
	}
	o, err := observe.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// observedReport builds the report `dblat report 2` gives of a stored observation stored
// as run 2.
func observedReport(t testing.TB, name string) *Report {
	t.Helper()
	run, err := storedObservation(t, name).Run("postgres", observe.RunSourceOf(observe.SourceProxy))
	if err != nil {
		t.Fatal(err)
	}
	run.ID = 2
	r, err := Build(Input{Study: "2", Description: "An application observed through dblat proxy --observe (runs 2)", Runs: []results.Run{*run}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestObservedStored: the report of a real observation answers its question first. Its
// headline is the observation's; its only chart the prediction, response time beside
// throughput, with all transactions and at most chartShapes shapes ranked by their share
// of the time; the verdict quotes the prediction's own figures; the page opens with the
// observation's title, the verdict and the chart, keeps the caveats in view, puts the
// shapes in a table below (the busiest detailShapes, the rest collapsed) and says nothing
// of what applies only to runs dblat drove.
func TestObservedStored(t *testing.T) {
	for _, name := range storedObservations {
		t.Run(name, func(t *testing.T) {
			r := observedReport(t, name)
			if !r.ObservedOnly() || len(r.Observed) != 1 || len(r.Charts) != 1 || r.Charts[0].Kind != ChartPredicted {
				t.Fatalf("observed only %v, %d sections, charts %d", r.ObservedOnly(), len(r.Observed), len(r.Charts))
			}
			o := &r.Observed[0]
			checkRanking(t, o)
			ch := &r.Charts[0]
			if len(ch.Panels) != 2 || len(ch.Panels[0].Series) != 1+o.Top || ch.Panels[0].Y == nil || ch.Panels[1].Y == nil {
				t.Errorf("chart %s: %d panels, %d response-time lines for %d top shapes", ch.ID, len(ch.Panels), len(ch.Panels[0].Series), o.Top)
			}
			for _, want := range []string{"PostgreSQL application at " + o.Upstream, o.Started.Format("2006-01-02 15:04 UTC"), words.Count(o.Clients, "client")} {
				if !strings.Contains(o.Title, want) {
					t.Errorf("title %q lacks %q", o.Title, want)
				}
			}
			busiest := o.Shapes[o.Ranked[0]]
			for _, want := range []string{"+5 ms", busiest.Name, msValue(busiest.HeadlineMs), msValue(busiest.LatencyMs), "+" + msText2(o.Fall10),
				"+" + msText2(o.Fall50), meanText(o.Predictions[0].TPS) + " TPS"} {
				if !strings.Contains(o.Verdict, want) {
					t.Errorf("verdict %q lacks %q", o.Verdict, want)
				}
			}
			if o.UpperBound != strings.Contains(o.Verdict, "at most") {
				t.Errorf("upper bound %v, verdict %q", o.UpperBound, o.Verdict)
			}
			checkObservedPage(t, r)
		})
	}
}

// checkRanking: Ranked orders every shape by its share of the time, the shares sum to
// one, and Top counts the shapes drawn.
func checkRanking(t *testing.T, o *Observed) {
	t.Helper()
	if len(o.Ranked) != len(o.Shapes) || o.Top > chartShapes {
		t.Fatalf("%d ranked of %d shapes, top %d", len(o.Ranked), len(o.Shapes), o.Top)
	}
	seen := slices.Clone(o.Ranked)
	slices.Sort(seen)
	sum := 0.0
	for i, j := range o.Ranked {
		if seen[i] != i {
			t.Fatalf("ranked %v is not a permutation", o.Ranked)
		}
		if i > 0 && o.Shapes[j].TimeShare > o.Shapes[o.Ranked[i-1]].TimeShare {
			t.Errorf("shape %s ranked below a shape of less time", o.Shapes[j].Label)
		}
		sum += o.Shapes[j].TimeShare
	}
	if sum < 0.999 || sum > 1.001 {
		t.Errorf("time shares sum to %v", sum)
	}
	for _, j := range o.Ranked[:o.Top] {
		if o.Shapes[j].TimeShare < minChartShare {
			t.Errorf("shape %s drawn with %.3f of the time", o.Shapes[j].Label, o.Shapes[j].TimeShare)
		}
	}
}

// checkObservedPage: the page's order and what it leaves out.
func checkObservedPage(t *testing.T, r *Report) {
	t.Helper()
	o := &r.Observed[0]
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String()) // html/template writes + as &#43;
	at := func(s string) int {
		t.Helper()
		i := strings.Index(page, s)
		if i < 0 {
			t.Errorf("the page lacks %q", s)
		}
		return i
	}
	order := []int{at("<h1>" + (o.Title) + "</h1>"), at(`<p class="verdict">` + (o.Verdict)), at(`<figure class="chart" id="` + o.Chart)}
	if len(o.Losers) > 0 {
		order = append(order, at("What would help at +5 ms"))
	}
	for _, c := range o.Caveats {
		order = append(order, at((capitalize(c.Text))))
	}
	order = append(order, at("Predicted at each added RTT"), at(`id="shapes-2"`))
	if !slices.IsSorted(order) {
		t.Errorf("page order (title, verdict, chart, help, caveats, table, shapes) is off: %v", order)
	}
	if n := strings.Count(page[:at("Predicted at each added RTT")], "<details>"); n != len(o.Losers) {
		t.Errorf("%d collapsed parts above the tables, want one per advice (the caveats stay in view)", n)
	}
	for _, j := range o.Ranked {
		at("<summary>" + (o.Shapes[j].Name) + "</summary>")
	}
	if more := len(o.Shapes) - detailShapes; more > 0 {
		at("<summary>" + words.Count(more, "more shape"))
	}
	for _, absent := range []string{"Credibility", "Not checked", "What TPS", "Service time", `id="cells"`, `id="transactions"`, "Findings"} {
		if strings.Contains(page, absent) {
			t.Errorf("the page of an observation says %q", absent)
		}
	}
}

// TestObservedSummaryGolden: the one-screen summary of real observations, byte for byte. It
// opens with the observation's title, its question and the verdict, then the predictions,
// and fits a screen: at most 45 lines of at most 100 columns.
func TestObservedSummaryGolden(t *testing.T) {
	for _, name := range storedObservations {
		t.Run(name, func(t *testing.T) {
			r := observedReport(t, name)
			var b bytes.Buffer
			if err := WriteSummary(&b, r, "/home/me/"+name+".html"); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".summary.golden", b.Bytes())
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) > 45 {
				t.Errorf("%d lines, want at most 45", len(lines))
			}
			for i, l := range lines {
				if n := len([]rune(l)); n > summaryWidth {
					t.Errorf("line %d is %d columns: %s", i+1, n, l)
				}
			}
			o := &r.Observed[0]
			if lines[0] != o.Title || !strings.HasPrefix(lines[1], "What would a farther database cost it?") ||
				!strings.HasPrefix(lines[4], "  At +5 ms of round-trip time") {
				t.Errorf("summary does not open with the title, the question and the verdict:\n%s", b.String())
			}
			for _, absent := range []string{"Credibility", "What TPS", "Verdict\n"} {
				if strings.Contains(b.String(), absent) {
					t.Errorf("summary says %q", absent)
				}
			}
		})
	}
}
