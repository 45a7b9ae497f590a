package cli

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dblat/dblat/internal/engine"
)

// Shell completion (`dblat completion bash|zsh|fish|powershell`) of what only dblat knows:
// the managed servers of the state directory (--target, server stop NAME) and the studies
// of the results store (report STUDY, study status|resume NAME, --study, ...). Completion
// reads; it never creates a state directory or a results file.

// completionTimeout bounds how long a completion waits for a results store (a PostgreSQL
// one may be far away): a shell that hangs on Tab is worse than no suggestions.
const completionTimeout = 2 * time.Second

// completeServers completes the names of the managed servers, with their engine and state
// as the description.
func (a *app) completeServers(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	list, err := a.registry().List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, inst := range list {
		if slices.Contains(args, inst.Name) {
			continue
		}
		state := "stopped"
		if inst.PID != 0 {
			state = "running"
		}
		out = append(out, cobra.CompletionWithDesc(inst.Name, inst.Engine+", "+state))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeStudies completes the names of the studies in the results store.
func (a *app) completeStudies(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	loc := a.resultsDB
	if !strings.Contains(loc, "://") && !strings.Contains(loc, "=") {
		if _, err := os.Stat(loc); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp // no store yet: nothing to offer, nothing to create
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	store, err := a.openStore(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer store.Close()
	list, err := store.Studies(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := make([]cobra.Completion, 0, len(list))
	for _, s := range list {
		out = append(out, cobra.CompletionWithDesc(s.Name, s.File))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// firstArg completes the first argument with complete, and nothing after it.
func firstArg(complete cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return complete(cmd, args, toComplete)
	}
}

// completeManagedEngines completes the engines dblat manages servers of.
func completeManagedEngines(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return engine.Managed(), cobra.ShellCompDirectiveNoFileComp
}

// registerFlagCompletions completes, on every command that has them, --target with the
// managed servers and --study with the stored studies, wherever the flags are declared.
func (a *app) registerFlagCompletions(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		a.registerFlagCompletions(sub)
	}
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "target":
			_ = cmd.RegisterFlagCompletionFunc(f.Name, a.completeServers)
		case "study":
			_ = cmd.RegisterFlagCompletionFunc(f.Name, a.completeStudies)
		}
	})
}
