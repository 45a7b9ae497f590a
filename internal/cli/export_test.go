package cli

import "github.com/spf13/cobra"

// CommandPaths lists the path of every command below dblat (["server", "start"], ...),
// hidden ones included, for tests that go through them all.
func CommandPaths() [][]string {
	a := &app{st: &State{Getenv: func(string) string { return "" }}}
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(append([]string(nil), path...), sub.Name())
			out = append(out, p)
			walk(sub, p)
		}
	}
	walk(a.rootCommand(), nil)
	return out
}
