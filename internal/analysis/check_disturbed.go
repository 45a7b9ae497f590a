package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// RuleDisturbed: what disturbed runs' windows (package disturb), from the disturbances
// stored with each run: runs a study set aside and ran again (info: their cells' figures
// leave them out), counted runs that causes outside the server disturbed (a warning: the
// figure measures the machine too), the server's own checkpoints and vacuum and dips that
// no signal explains (info), and a machine without pressure information (info: less can be
// said there).
const RuleDisturbed = "disturbed"

var disturbedRule = rule{names: []string{RuleDisturbed}, check: (*checker).disturbed}

func (c *checker) disturbed() {
	var aside, external, own []*results.Run
	var asideCells, externalCells, ownCells []string
	psiMissing := false
	for _, cl := range c.g.Cells {
		for _, r := range cl.SetAside {
			aside = append(aside, r)
			asideCells = appendOnce(asideCells, cl.Key)
		}
		for _, r := range cl.Finished {
			if disturb.Disturbed(r) {
				external = append(external, r)
				externalCells = appendOnce(externalCells, cl.Key)
			} else if lostOwn(r) >= time.Duration(disturb.Material*float64(r.Summary.Elapsed)) && r.Summary.Elapsed > 0 {
				own = append(own, r)
				ownCells = appendOnce(ownCells, cl.Key)
			}
			if p := r.Client.Pressure; p != nil && !*p {
				psiMissing = true
			}
		}
	}
	if len(aside) > 0 {
		c.add(Finding{Rule: RuleDisturbed, Severity: Info,
			Message: fmt.Sprintf("%s set aside as disturbed and run again (the study's disturbed: rerun): causes outside the server took at least %s of their windows, so their cells' figures leave them out",
				wasWere(len(aside)), pct(disturb.Material)),
			Evidence: disturbedEvidence(aside, c.cellOf), Runs: runIDs(aside), Cells: asideCells,
			Fix: "nothing to do; to disturb fewer runs, give the study a quieter machine: a data directory in memory (server storage: memory) for a question about the network, no other work on the host"})
	}
	if len(external) > 0 {
		c.add(Finding{Rule: RuleDisturbed, Severity: Warning,
			Message: fmt.Sprintf("%s counted in their cells' figures lost at least %s of their windows to causes outside the server: those figures measure the machine as well",
				words.Count(len(external), "run"), pct(disturb.Material)),
			Evidence: disturbedEvidence(external, c.cellOf), Runs: runIDs(external), Cells: externalCells,
			Fix: "give the study disturbed: rerun to set such runs aside and run their cells again, or run it on a quieter machine: a data directory in memory (server storage: memory) when the question is not the disk, nothing else running"})
	}
	if len(own) > 0 {
		c.add(Finding{Rule: RuleDisturbed, Severity: Info,
			Message: fmt.Sprintf("%s lost at least %s of their windows to the server's own work (a checkpoint, vacuum) or to dips that no signal explains: part of what the server does, but a short window catches them in some repeats and not others",
				words.Count(len(own), "run"), pct(disturb.Material)),
			Evidence: disturbedEvidence(own, c.cellOf), Runs: runIDs(own), Cells: ownCells,
			Fix: "lengthen the window so that every repeat holds its share of checkpoints, or tune them (checkpoint_timeout, max_wal_size) if they are not the question"})
	}
	if psiMissing {
		c.add(Finding{Rule: RuleDisturbed, Severity: Info,
			Message:  "the machine that ran these runs has no pressure stall information (/proc/pressure): waits for the disk, memory and CPU were not measured, so this check can name fewer causes of a disturbed run",
			Evidence: "/proc/pressure missing where the runs ran (results show RUN: client)",
			Fix:      "run on Linux 4.20 or later with PSI enabled (psi=1 on the kernel's command line where it is off by default)"})
	}
}

// lostOwn is the window time r lost to causes that are not external (the server's own
// work, and what no signal explains).
func lostOwn(r *results.Run) time.Duration {
	var lost time.Duration
	for _, d := range r.Disturbances {
		if !disturb.External(d.Cause) {
			lost += d.Lost
		}
	}
	return lost
}

// disturbedEvidence lists, per run, what disturbed it: "run 4 (rtt=1ms): the host's disk
// took 1.1 s of its 5.0 s window, from 0.0 s to 1.1 s: …".
func disturbedEvidence(runs []*results.Run, cellOf func(*results.Run) string) string {
	lines := make([]string, 0, len(runs))
	for _, r := range runs {
		var parts []string
		for _, d := range r.Disturbances {
			parts = append(parts, fmt.Sprintf("%s took %s, %s", disturb.Describe(d.Cause), d.Lost.Round(10*time.Millisecond), d.Evidence))
		}
		lines = append(lines, fmt.Sprintf("run %d (%s, %.1f s window): %s", r.ID, orAll(cellOf(r)), r.Summary.Elapsed.Seconds(), strings.Join(parts, "; ")))
	}
	return listed(lines, 8)
}

// whatDisturbed says in a few words what disturbed r, for another rule's evidence: "the
// host's disk took 1.1 s"; "" for a quiet run.
func whatDisturbed(r *results.Run) string {
	var parts []string
	for _, d := range r.Disturbances {
		parts = append(parts, fmt.Sprintf("%s took %s", disturb.Describe(d.Cause), d.Lost.Round(10*time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// wasWere writes "1 run was", "3 runs were".
func wasWere(n int) string {
	if n == 1 {
		return "1 run was"
	}
	return words.Count(n, "run") + " were"
}

func runIDs(runs []*results.Run) []int64 {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
