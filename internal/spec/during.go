package spec

import (
	"fmt"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/option"
)

// The operations a run may start on a managed server during its window (the during
// field: "backup@30s"), as package engine's Operator names them: a backup with the
// engine's own tool, a vacuum (PostgreSQL's VACUUM, Firebird's sweep), a checkpoint, an
// index build on one of the workload's largest tables. Which of them an engine has is
// the engine's to say; the run is refused when it has not.
var Operations = []string{"backup", "vacuum", "checkpoint", "index"}

// operationAliases are other words for an operation: Firebird's sweep is its vacuum.
var operationAliases = map[string]string{"sweep": "vacuum"}

// DuringNone is the during field's value for a run without an operation.
const DuringNone = "none"

// ParseDuring reads an operation during the window as users write it, OPERATION@OFFSET
// ("backup@30s": a backup 30 s into the window; "sweep@10s" is "vacuum@10s"), or
// DuringNone (op ""). It checks the syntax; Validate checks the offset against the window.
func ParseDuring(s string) (op string, at time.Duration, err error) {
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, DuringNone) {
		return "", 0, nil
	}
	name, offset, ok := strings.Cut(t, "@")
	name = strings.ToLower(strings.TrimSpace(name))
	if !ok {
		return "", 0, fmt.Errorf("must be OPERATION@OFFSET, like backup@30s (an operation 30 s into the window), got %q", s)
	}
	if a, ok := operationAliases[name]; ok {
		name = a
	}
	if err := option.OneOf(name, Operations); err != nil {
		return "", 0, fmt.Errorf("operation %v", err)
	}
	if at, err = option.ParseDuration(offset); err != nil {
		return "", 0, fmt.Errorf("offset %v", err)
	}
	if at < 0 {
		return "", 0, fmt.Errorf("offset must not be negative, got %s", FormatDuration(at))
	}
	return name, at, nil
}

// FormatDuring writes an operation and its offset as ParseDuring reads them back:
// "backup@30s", or DuringNone for none.
func FormatDuring(op string, at time.Duration) string {
	if op == "" {
		return DuringNone
	}
	return op + "@" + FormatDuration(at)
}

// Operation returns the operation the run starts during its window and its offset into
// the window; op is "" for none.
func (p *Params) Operation() (op string, at time.Duration) {
	op, at, _ = ParseDuring(p.During) // canonical when set through the field
	return op, at
}

// duringField is the during field's declaration (Fields).
var duringField = Field{Option: option.Option{Name: "during", Kind: option.String, Default: DuringNone,
	Usage: "OPERATION@OFFSET: start an operation on the managed server this far into the window, and record its start, end and outcome with the run: backup (the engine's own tool), vacuum (sweep on Firebird), checkpoint or index (an index build on the workload's largest table); none: no operation"},
	Factor: true, Late: true, Mismatch: "another operation during the window (a backup or vacuum takes the server's disk and CPU while it runs)",
	set: func(p *Params, s string) error {
		op, at, err := ParseDuring(s)
		if err != nil {
			return err
		}
		p.During = ""
		if op != "" {
			p.During = FormatDuring(op, at)
		}
		return nil
	},
	get: func(p *Params) string {
		if p.During == "" {
			return DuringNone
		}
		return p.During
	}}
