// Command dblat measures what network latency, connection-pool size and server settings cost
// a database's OLTP throughput. See README.md, or run `dblat --help`.
package main

import (
	"os"

	"github.com/dblat/dblat/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.NewState(), os.Args[1:]))
}
