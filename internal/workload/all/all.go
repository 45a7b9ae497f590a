// Package all registers every workload dblat ships. Import it for its side effect where the
// whole set is wanted (the command line, the execution core's tests); adding a workload is
// its own package plus one line here.
package all

import (
	// Each workload package registers its definitions in an init function.
	_ "github.com/dblat/dblat/internal/workload/script"
	_ "github.com/dblat/dblat/internal/workload/simple"
	_ "github.com/dblat/dblat/internal/workload/tpcc"
)
