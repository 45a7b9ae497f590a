package firebird_test

import (
	"testing"

	"github.com/dblat/dblat/internal/engine/enginetest"
	"github.com/dblat/dblat/internal/engine/firebird"
	"github.com/dblat/dblat/internal/engine/firebird/fbtest"
	"github.com/dblat/dblat/internal/managed"
)

// TestConformance runs the suite every engine passes on the shared test server of each
// architecture (an attachment is a thread of one process in Super and SuperClassic, a
// process of its own in Classic: cancels and lost connections take other paths). A
// snapshot ("concurrency") transaction fails a write to a row changed since it began
// (isc_update_conflict); deadlocks are not provoked, since Firebird 3.0's lock manager
// may take DeadlockTimeout (10 s) or longer to find one (doc.go, "Deadlocks").
func TestConformance(t *testing.T) {
	for _, arch := range fbtest.Architectures {
		t.Run(arch, func(t *testing.T) {
			srv := enginetest.Server{
				Instance:    func(t testing.TB) *managed.Instance { return fbtest.Server(t, arch) },
				NewDatabase: func(t testing.TB) string { return fbtest.NewDatabase(t, arch) },
			}
			enginetest.Run(t, firebird.Engine{}, srv, enginetest.Expect{SnapshotConflicts: true})
		})
	}
}
