package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findChromium returns the path of a Chromium to test the HTML in, or skips the test (fails
// it when DBLAT_REQUIRE_SERVERS=1, as `make test` sets, since setup installs chromium).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("DBLAT_REQUIRE_SERVERS") == "1" {
		t.Fatal("chromium not found and DBLAT_REQUIRE_SERVERS=1: install it (scripts/setup.sh does)")
	}
	t.Skip("chromium not found: skipping the browser test (apt-get install chromium, or make setup)")
	return ""
}

// chartInfo is what the page reports about one chart.
type chartInfo struct {
	ID       string   `json:"id"`
	Label    string   `json:"label"`
	Top      float64  `json:"top"`
	Bottom   float64  `json:"bottom"`
	Right    float64  `json:"right"`
	Width    float64  `json:"width"`
	Height   float64  `json:"height"`
	Texts    []string `json:"texts"`
	Overlaps []string `json:"overlaps"`
	Outside  []string `json:"outside"`
}

type pageInfo struct {
	Charts      []chartInfo `json:"charts"`
	FontLoaded  bool        `json:"fontLoaded"`
	ScrollWidth float64     `json:"scrollWidth"`
	ViewWidth   float64     `json:"viewWidth"`
	ViewHeight  float64     `json:"viewHeight"`
	Resources   []string    `json:"resources"`
	Sections    []string    `json:"sections"`
	Scripts     int         `json:"scripts"`
	FailedRows  int         `json:"failedRows"`
	// H1 is the page's title; VerdictBottom where its first verdict ends, from the top.
	H1            string  `json:"h1"`
	VerdictBottom float64 `json:"verdictBottom"`
}

// pageProbe measures the rendered page: each chart's title (aria-label), size and text
// elements, pairs of chart texts whose boxes overlap by more than 1 px each way, texts
// drawn outside their chart, whether the embedded font loaded, horizontal overflow, and
// every resource the page loaded other than itself and data: URLs.
const pageProbe = `(async () => {
  await document.fonts.ready;
  const charts = [...document.querySelectorAll('figure.chart')].map(f => {
    const svg = f.querySelector('svg');
    const r = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() !== '');
    const boxes = texts.map(t => ({s: t.textContent, b: t.getBoundingClientRect()}));
    const overlaps = [], outside = [];
    for (let i = 0; i < boxes.length; i++) {
      const a = boxes[i].b;
      if (a.left < r.left - 1 || a.right > r.right + 1 || a.top < r.top - 1 || a.bottom > r.bottom + 1) outside.push(boxes[i].s);
      for (let j = i + 1; j < boxes.length; j++) {
        const b = boxes[j].b;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) overlaps.push(boxes[i].s + ' / ' + boxes[j].s);
      }
    }
    return {id: f.id, label: svg.getAttribute('aria-label'), top: r.top, bottom: r.bottom, right: r.right,
      width: r.width, height: r.height,
      texts: texts.map(t => t.textContent), overlaps, outside};
  });
  const resources = performance.getEntriesByType('resource').map(e => e.name)
    .filter(n => !n.startsWith('data:') && n !== location.href);
  return {charts, fontLoaded: document.fonts.check('12px "Liberation Sans"'),
    scrollWidth: document.documentElement.scrollWidth, viewWidth: window.innerWidth,
    viewHeight: window.innerHeight,
    resources, scripts: document.scripts.length,
    sections: [...document.querySelectorAll('section[id]')].map(s => s.id),
    failedRows: document.querySelectorAll('#runs tr.failed, #runs tr.aborted').length,
    h1: document.querySelector('h1')?.textContent ?? '',
    verdictBottom: document.querySelector('p.verdict')?.getBoundingClientRect().bottom ?? 0};
})()`

// TestHTMLInBrowser renders reports in headless Chromium at 1280 × 800 — the synthetic
// fixture (RTT × terminals × mode), one whose only factor is non-numeric (points per
// category), one of a single cell, the two stored real studies (the quickstart and a
// Firebird three-architecture study) with their credibility findings, and two stored
// observations of applications (dblat's TPC-C of 138 shapes, pgbench's select-only of one)
// — and checks that each loads with no console message of level warning or above and no
// exception, fetches nothing, shows its headline chart whole on the first screen (for an
// observation: the prediction, below its title and verdict), and shows every chart with
// its title, axis labels with units, ticks and a legend naming every series, with text
// that neither collides nor spills out of its chart, and the failed runs marked.
//
// chromedp rather than `chromium --dump-dom --enable-logging`: the DevTools protocol gives
// console calls, exceptions and browser-log entries (failed loads) as structured events,
// and lets the test measure the laid-out page (text boxes, fonts), which a DOM dump cannot.
//
// DBLAT_REPORT_SCREENSHOT=dir also writes, per report, the first screen, the whole page
// and each chart as PNG into dir/NAME/.
func TestHTMLInBrowser(t *testing.T) {
	exe := findChromium(t)
	dir := t.TempDir()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(screenW, screenH),
	)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// Start the browser on the long-lived context, then bound the test.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(screenW, screenH)); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 120*time.Second)
	defer tcancel()

	all := fixture(t)
	build := func(in Input) func(*testing.T) *Report {
		return func(t *testing.T) *Report {
			r, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	cases := []struct {
		name  string
		build func(*testing.T) *Report
	}{
		{"latency", build(fixInput(t))},
		{"modes", build(Input{Study: "modes", Factors: []string{"set.ServerMode"}, Runs: only(0, 10)(all)})},
		{"single", build(Input{Study: "single", Runs: only(time.Millisecond, 20, "Classic")(all)})},
	}
	for _, n := range storedStudies {
		cases = append(cases, struct {
			name  string
			build func(*testing.T) *Report
		}{n, func(t *testing.T) *Report { return storedReport(t, n) }})
	}
	// An application of 138 shapes and one of one.
	for _, n := range storedObservations[:2] {
		cases = append(cases, struct {
			name  string
			build func(*testing.T) *Report
		}{n, func(t *testing.T) *Report { return observedReport(t, n) }})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkInBrowser(t, tctx, tc.build(t), filepath.Join(dir, tc.name+".html"))
		})
	}
}

// The screen the first chart must fit on: a 1280 × 800 laptop display.
const screenW, screenH = 1280, 800

// checkInBrowser writes r's HTML to path, loads it in the browser of ctx and checks it.
func checkInBrowser(t *testing.T, ctx context.Context, r *Report, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, r); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		messages []string
		done     = make(chan struct{})
	)
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	console := chromedp.Console(cctx)
	go func() {
		defer close(done)
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleLog && m.Type != chromedp.ConsoleDebug && m.Type != chromedp.ConsoleInfo {
				mu.Lock()
				messages = append(messages, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()

	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatalf("load the report: %v", err)
	}
	info, err := chromedp.Run(ctx, chromedp.Evaluate[pageInfo](pageProbe, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("probe the page: %v", err)
	}
	if shots := os.Getenv("DBLAT_REPORT_SCREENSHOT"); shots != "" {
		screenshots(t, ctx, filepath.Join(shots, strings.TrimSuffix(filepath.Base(path), ".html")), info)
	}
	ccancel()
	<-done

	for _, m := range messages {
		t.Errorf("console: %s", m)
	}
	if !info.FontLoaded {
		t.Error("the embedded Liberation Sans did not load")
	}
	if info.ScrollWidth > info.ViewWidth {
		t.Errorf("page scrolls sideways: %v px wide in a %v px window", info.ScrollWidth, info.ViewWidth)
	}
	if len(info.Resources) > 0 {
		t.Errorf("page loaded resources: %v", info.Resources)
	}
	if info.Scripts != 0 {
		t.Errorf("%d scripts in the page", info.Scripts)
	}
	if info.FailedRows != r.Counts.Failed+r.Counts.Aborted {
		t.Errorf("%d runs marked failed or aborted, want %d", info.FailedRows, r.Counts.Failed+r.Counts.Aborted)
	}
	if len(info.Charts) != len(r.Charts) || len(r.Charts) == 0 {
		t.Fatalf("%d charts in the page, want %d (and at least one)", len(info.Charts), len(r.Charts))
	}
	// The headline chart is whole on the first screen.
	if first := info.Charts[0]; first.Top < 0 || first.Bottom > info.ViewHeight || first.Right > info.ViewWidth {
		t.Errorf("headline chart %s at top %.0f, bottom %.0f, right %.0f: not within the %.0f × %.0f first screen",
			first.ID, first.Top, first.Bottom, first.Right, info.ViewWidth, info.ViewHeight)
	}
	// The first chart in the page is the report's first (the order the writers promise).
	if info.Charts[0].ID != r.Charts[0].ID {
		t.Errorf("first chart in the page is %s, want %s", info.Charts[0].ID, r.Charts[0].ID)
	}
	// An observed application's page opens with its title and the verdict, above the
	// prediction (its first chart, whole on the first screen as checked above).
	if r.ObservedOnly() {
		if info.H1 != r.Observed[0].Title {
			t.Errorf("the page's title is %q, want the observation's %q", info.H1, r.Observed[0].Title)
		}
		if info.VerdictBottom <= 0 || info.VerdictBottom > info.Charts[0].Top {
			t.Errorf("the verdict ends at %.0f px, the prediction chart starts at %.0f px: want the verdict above it", info.VerdictBottom, info.Charts[0].Top)
		}
	}
	byID := map[string]*Chart{}
	for i := range r.Charts {
		byID[r.Charts[i].ID] = &r.Charts[i]
	}
	unit := regexp.MustCompile(`\(.+\)`)
	for _, got := range info.Charts {
		want := byID[got.ID]
		if want == nil {
			t.Errorf("chart %s in the page is not in the report", got.ID)
			continue
		}
		if got.Label != want.Title || want.Title == "" {
			t.Errorf("chart %s is labelled %q, want the title %q", got.ID, got.Label, want.Title)
		}
		if got.Width < 600 || got.Height < 250 {
			t.Errorf("chart %s is %v×%v px", want.ID, got.Width, got.Height)
		}
		// Axis labels with units: a numeric axis names its unit in parentheses; panels of
		// their own Y axis label it each.
		yLabels := []string{want.Y.Label}
		if want.Y.Label == "" {
			yLabels = nil
			for _, pn := range want.Panels {
				if pn.Y == nil {
					t.Errorf("chart %s: no Y label, and a panel without its own", want.ID)
					continue
				}
				yLabels = append(yLabels, pn.Y.Label)
			}
		}
		for _, l := range yLabels {
			if !unit.MatchString(l) {
				t.Errorf("chart %s: Y label %q has no unit", want.ID, l)
			}
		}
		if want.X.Scale != ScaleCategorical && !unit.MatchString(want.X.Label) {
			t.Errorf("chart %s: X label %q has no unit", want.ID, want.X.Label)
		}
		need := append([]string{want.Title, want.X.Label}, yLabels...)
		groups := map[string]bool{}
		for _, pn := range want.Panels {
			need = append(need, pn.Title)
			for _, s := range pn.Series {
				if s.Stat != StatModel {
					groups[s.Group] = true
				}
				if want.Kind == ChartPercentiles {
					need = append(need, s.Stat) // the legend: a line style per statistic
				}
			}
		}
		// A legend naming every series where there are several.
		if len(groups) > 1 {
			for g := range groups {
				need = append(need, g)
			}
		}
		for _, tk := range want.X.Ticks {
			need = append(need, tk.Label)
		}
		for _, n := range need {
			if n != "" && !slicesContains(got.Texts, n) {
				t.Errorf("chart %s lacks the text %q; it has:\n%s", want.ID, n, strings.Join(got.Texts, "\n"))
			}
		}
		for _, o := range got.Overlaps {
			t.Errorf("chart %s: texts overlap: %s", want.ID, o)
		}
		for _, o := range got.Outside {
			t.Errorf("chart %s: text outside the chart: %s", want.ID, o)
		}
	}
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// screenshots writes the whole page and each chart as PNG into dir, for people to look at.
func screenshots(t *testing.T, ctx context.Context, dir string, info pageInfo) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "first-screen.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range info.Sections {
		png, err := chromedp.Run(ctx, chromedp.Screenshot("#"+id))
		if err != nil {
			t.Fatalf("screenshot %s: %v", id, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "section-"+id+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range info.Charts {
		png, err := chromedp.Run(ctx, chromedp.Screenshot("#"+c.ID))
		if err != nil {
			t.Fatalf("screenshot %s: %v", c.ID, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.ID+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
}
