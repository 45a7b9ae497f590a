package cli

import (
	"fmt"
	"sync"
	"time"
)

// progressBar draws "label [#####.....]  45%  1.2M/2.7M rows  3.1 s" on stderr. On a
// terminal it redraws in place at most 10 times a second; elsewhere it prints a line at
// every 10 %, so logs stay short. It is safe for concurrent use.
type progressBar struct {
	a      *app
	label  string
	start  time.Time
	mu     sync.Mutex
	last   time.Time
	lastPc int
}

func (a *app) newProgress(label string) *progressBar {
	return &progressBar{a: a, label: label, start: time.Now(), lastPc: -1}
}

// update reports done of total units.
func (p *progressBar) update(done, total int64) {
	if total <= 0 {
		return
	}
	pc := int(done * 100 / total)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.a.st.IsTerminal {
		if now.Sub(p.last) < 100*time.Millisecond && done < total {
			return
		}
		p.last = now
		const width = 30
		fill := int(done * width / total)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = '.'
			if i < fill {
				bar[i] = '#'
			}
		}
		fmt.Fprintf(p.a.st.Stderr, "\r%s [%s] %3d%%  %s/%s rows  %.1f s ", p.label, bar, pc,
			si(done), si(total), now.Sub(p.start).Seconds())
		if done >= total {
			fmt.Fprintln(p.a.st.Stderr)
		}
		return
	}
	if pc/10 != p.lastPc/10 {
		p.lastPc = pc
		fmt.Fprintf(p.a.st.Stderr, "%s %3d%%  %s/%s rows  %.1f s\n", p.label, pc, si(done), si(total), now.Sub(p.start).Seconds())
	}
}

// si formats a count with a k/M/G suffix.
func si(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// bytesSI formats a byte count.
func bytesSI(n int64) string { return si(n) + "B" }
