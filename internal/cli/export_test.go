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

// ParseCommandLine finds the command args name below dblat and parses its flags and
// arguments as the command would, without running it: an unknown command or flag, a bad
// flag value or the wrong number of arguments is an error.
func ParseCommandLine(args []string) error {
	a := &app{st: &State{Getenv: func(string) string { return "" }}}
	root := a.rootCommand()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if cmd.Args != nil {
		return cmd.ValidateArgs(cmd.Flags().Args())
	}
	return nil
}
