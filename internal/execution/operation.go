package execution

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// OperationGrace is how long a run waits, after its window and drain, for the operation it
// started during its window to end (a backup that outlasts the window is waited for, so
// that its end is known); past it the operation is canceled and recorded so.
const OperationGrace = 10 * time.Minute

// duringDir is the directory of an instance in which operations write (a backup), one
// directory per operation, removed once the run has ended.
const duringDir = "during"

// checkDuring checks the operation rs asks for during its window (spec.Params.During)
// against where it runs, before anything is touched: a managed server (inst; nil for a
// server dblat does not manage, or not known yet: managed says whether it will be one),
// whose engine has the operation (engine.Operator), with cfg's binaries, and for an index
// build a workload that names a table to index (workload.Definition.Index). It returns
// the problem tagged with the during field, or nil.
func checkDuring(rs *spec.Run, e engine.Engine, def *workload.Definition, managed bool, cfg engine.LaunchConfig) *field.Error {
	name, _ := rs.Operation()
	if name == "" {
		return nil
	}
	bad := func(format string, args ...any) *field.Error {
		return spec.Invalid(spec.FieldPath("during"), format, args...)
	}
	if !managed {
		return bad("%s: an operation during the window needs a managed server, whose tools dblat runs on its files (server: in a study, a managed server's name as the target of dblat run)", name)
	}
	op := engine.Caps(e).Operator
	if op == nil {
		return bad("%s: dblat starts no operations on %s servers", name, e.Name())
	}
	if _, err := op.Operation(cfg, name); err != nil {
		return bad("%s: %v", name, err)
	}
	if name == engine.OpIndex && (def == nil || def.Index == nil) {
		return bad("index: workload %s names no table of its own to index (dblat does not know the tables of the script workload)", rs.Workload)
	}
	return nil
}

// operation is the operation a run starts on its managed server during its window: it
// waits for its offset into the window, runs, and records its times and outcome.
type operation struct {
	c   *Core
	op  engine.Operator
	req engine.OperationRequest
	rec results.Operation
	// refuse, when set, says why the operation is not started at all (no room for a
	// backup); it is recorded as failed at its offset.
	refuse string

	cancel context.CancelFunc
	done   chan struct{}
	undo   func(context.Context) error
}

// newOperation prepares the operation the run asks for, or returns nil for a run without
// one. It makes the directory the operation writes in.
func (r *runState) newOperation() (*operation, error) {
	name, at := r.rs.Operation()
	inst := r.t.Server
	if name == "" || inst == nil {
		return nil, nil
	}
	op := engine.Caps(r.t.Engine).Operator // checked with the run
	cfg := r.c.launchConfig(r.t.Engine.Name())
	cfg.Install, cfg.Version = inst.Install, inst.Version
	tool, err := op.Operation(cfg, name)
	if err != nil {
		return nil, asInput(err)
	}
	dir, err := os.MkdirTemp(mkdirAll(filepath.Join(inst.Dir, duringDir)), name+"-")
	if err != nil {
		return nil, fmt.Errorf("operation %s: %w", name, err)
	}
	o := &operation{c: r.c, op: op, done: make(chan struct{}),
		req: engine.OperationRequest{Op: name, Server: inst, DSN: r.dsn, DB: r.admin.DB, Dir: dir},
		rec: results.Operation{Name: name, Tool: tool, At: at}}
	if idx := r.p.def.Index; idx != nil {
		o.req.Table, o.req.Columns = idx.Table, idx.Columns
	}
	if name == engine.OpBackup {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err == nil {
			free := int64(st.Bavail) * st.Bsize
			if need := r.info.DatabaseBytes + r.info.DatabaseBytes/4; need > 0 && free < need {
				o.refuse = fmt.Sprintf("not started: %s free in %s, and a backup of the %s database needs about %s",
					engine.FormatBytes(float64(free)), dir, engine.FormatBytes(float64(r.info.DatabaseBytes)), engine.FormatBytes(float64(need)))
			}
		}
	}
	r.closers = append(r.closers, func() { _ = os.RemoveAll(dir) })
	return o, nil
}

// mkdirAll makes dir if it is missing and returns it.
func mkdirAll(dir string) string {
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// start runs the operation in its own goroutine, rec.At after windowAt (the window's
// start), unless stop closes first (the run ended before it was due).
func (o *operation) start(ctx context.Context, windowAt time.Time, stop <-chan struct{}) {
	ctx, o.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(o.done)
		due := time.NewTimer(time.Until(windowAt.Add(o.rec.At)))
		defer due.Stop()
		select {
		case <-due.C:
		case <-stop:
			o.rec.Outcome, o.rec.Error = results.OperationNotStarted, "the window ended before it was due"
			return
		case <-ctx.Done():
			o.rec.Outcome, o.rec.Error = results.OperationNotStarted, "the run was stopped before it was due"
			return
		}
		o.rec.Started = time.Since(windowAt)
		if o.refuse != "" {
			o.rec.Ended, o.rec.Outcome, o.rec.Error = o.rec.Started, results.OperationFailed, o.refuse
			o.c.info("%s at %.1f s into the window: %s", o.rec.Name, o.rec.Started.Seconds(), o.refuse)
			return
		}
		o.c.info("%s started %.1f s into the window: %s", o.rec.Name, o.rec.Started.Seconds(), o.rec.Tool)
		res, err := o.op.RunOperation(ctx, o.req)
		o.rec.Ended = time.Since(windowAt)
		o.rec.Detail, o.undo = res.Detail, res.Undo
		switch {
		case err != nil && ctx.Err() != nil:
			o.rec.Outcome = results.OperationCanceled
			o.rec.Error = fmt.Sprintf("still running %s after the window ended: canceled", OperationGrace)
		case err != nil:
			o.rec.Outcome, o.rec.Error = results.OperationFailed, oneLine(err)
		default:
			o.rec.Outcome = results.OperationDone
		}
		msg := fmt.Sprintf("%s ended %.1f s into the window, after %.1f s: %s", o.rec.Name, o.rec.Ended.Seconds(),
			(o.rec.Ended - o.rec.Started).Seconds(), o.rec.Outcome)
		if o.rec.Error != "" {
			msg += " (" + o.rec.Error + ")"
		} else if o.rec.Detail != "" {
			msg += " (" + o.rec.Detail + ")"
		}
		o.c.info("%s", msg)
	}()
}

// finish waits for the operation to end, at most OperationGrace (then cancels it), and
// returns what became of it; a run that was stopped (stop: interrupted) cancels it at once.
// An operation never started (the run failed before its window) is recorded as not
// started.
func (o *operation) finish(started, stop bool) results.Operation {
	if !started {
		o.rec.Outcome, o.rec.Error = results.OperationNotStarted, "the run ended before its window"
		return o.rec
	}
	grace := OperationGrace
	if stop {
		grace = 0
	}
	select {
	case <-o.done:
	case <-time.After(grace):
		o.cancel()
		<-o.done
		if stop && o.rec.Outcome == results.OperationCanceled {
			o.rec.Error = "the run was stopped: canceled"
		}
	}
	o.cancel()
	return o.rec
}

// takeBack runs the operation's Undo (the index it built is dropped), so that the next run
// finds the data as the workload made it.
func (o *operation) takeBack(ctx context.Context) {
	if o.undo == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := o.undo(ctx); err != nil {
		o.c.info("warning: cannot take back what the %s left: %v", o.rec.Name, err)
	}
}

// limited reports whether the managed server inst runs in a memory cgroup, whose data a run
// drops from the page cache before it starts (managed.DropCache).
func limited(inst *managed.Instance) bool { return inst != nil && inst.MemoryCgroup != "" }
