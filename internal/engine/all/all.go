// Package all registers every engine dblat ships. Import it for its side effect where the
// whole set is wanted (the command line, tests across engines); adding an engine is its own
// package plus one line here.
package all

import (
	// Each engine registers itself with package engine in its init function.
	_ "github.com/dblat/dblat/internal/engine/firebird"
	_ "github.com/dblat/dblat/internal/engine/mariadb"
	_ "github.com/dblat/dblat/internal/engine/postgres"
)
