package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func addFormatFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "format", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
}

func checkFormat(f string) error {
	if f != "text" && f != "json" {
		return fmt.Errorf("--format %q: want text or json", f)
	}
	return nil
}
