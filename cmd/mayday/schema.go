package main

import (
	"github.com/spf13/cobra"

	"github.com/mayday-sim/mayday/scenarios"
)

func newSchemaCmd(io *ioStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of scenario files, for editors",
		Long: `Print a JSON Schema (draft 2020-12) of the scenario file format: every key with its
description, the valid words of every enum, the keys each fault kind takes. It is generated
from the key tree that 'mayday validate' checks files against, so it describes exactly the
keys this binary accepts. Editors with a YAML language server (VS Code's YAML extension,
Neovim, JetBrains) complete and check scenario files with it; put this first line in a file:

  # yaml-language-server: $schema=` + scenarios.JSONSchemaID + `

or point it at a local copy ('mayday schema > scenario.schema.json'). 'mayday validate' still
checks more than a schema can: tool references, ranges between keys, sweep values.`,
		Example: `  mayday schema > scenario.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.Out.Write(scenarios.JSONSchema())
			return err
		},
	}
}
