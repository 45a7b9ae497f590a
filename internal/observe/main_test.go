package observe_test

import (
	"os"
	"testing"

	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
)

// TestMain stops the shared PostgreSQL server the benchmarks start, so that none is left
// running after the test binary exits.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
