package main

import (
	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/safefile"
	"github.com/scry-pm/scry/workload"
)

func newWorkloadCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "workload",
		Short: "generate workloads for PM programs",
		Args:  cobra.ArbitraryArgs,
		RunE:  needSubcommand,
	}
	var opts workload.KVOptions
	var out string
	var force bool
	kv := &cobra.Command{
		Use:   "kv [--ops N] [--seed S] [-o FILE]",
		Short: "a seeded sequence of key-value commands for PMDK's mapcli (insert, remove, check)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := safefile.Create(out, safefile.Policy{What: "-o", Force: force})
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			if err := workload.KV(w, opts); err != nil {
				return err
			}
			return nil
		},
	}
	kv.Flags().IntVar(&opts.Ops, "ops", 1000, "number of operations")
	kv.Flags().BoolVar(&force, "force", false, "let -o replace an existing file")
	kv.Flags().Uint64Var(&opts.Seed, "seed", 1, "random seed (same seed, same workload)")
	kv.Flags().Uint64Var(&opts.Keys, "keys", 0, "size of the key space (0: scales with --ops)")
	kv.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of standard output")
	c.AddCommand(kv)
	return c
}
