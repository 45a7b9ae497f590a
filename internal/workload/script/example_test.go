package script_test

import (
	"context"
	"fmt"

	"github.com/dblat/dblat/internal/workload/script"
)

// printer is an Executor that prints each statement instead of running it.
type printer struct{}

func (printer) Exec(_ context.Context, st *script.Stmt) error {
	fmt.Println(st.SQL, st.Args)
	return nil
}

// A client seeded as pgbench --random-seed=4242 -c 1 seeds its first client sends the
// statement pgbench -M extended sends, with the value pgbench draws.
func Example() {
	s, err := script.Parse("select-only.sql", []byte(`\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	seeds, defaultSeed := script.PgbenchSeeds(4242, 1)
	c, err := script.NewClient(script.Config{ID: 0, Scale: 1, RandomSeed: 4242, DefaultSeed: defaultSeed,
		Seed: seeds[0], Mode: script.Params, Placeholder: script.Dollar})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		c.Begin(s) // a new transaction; c.Run again without Begin would retry it
		if err := c.Run(context.Background(), printer{}); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// SELECT abalance FROM pgbench_accounts WHERE aid = $1; [10899]
	// SELECT abalance FROM pgbench_accounts WHERE aid = $1; [44056]
}

func ExampleParse_error() {
	_, err := script.Parse("bad.sql", []byte("\\set n random(1, 10)\n\\slep :n ms\n"))
	fmt.Println(err)
	// Output: bad.sql:2:1: unknown meta-command \slep (did you mean \sleep?)
}
