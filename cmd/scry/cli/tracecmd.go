package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/pm/replay"
	"github.com/scry-pm/scry/trace"
)

func newTraceCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "inspect a trace: dump, stats, verify",
		Args:  cobra.ArbitraryArgs,
		RunE:  needSubcommand,
	}
	var dumpOpts trace.DumpOptions
	dump := &cobra.Command{
		Use:   "dump TRACE",
		Short: "print every record of a trace, one per line",
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := openTrace(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			return traceErr(cmd, args[0], trace.Dump(cmd.OutOrStdout(), r, dumpOpts))
		},
	}
	stats := &cobra.Command{
		Use:   "stats TRACE",
		Short: "count a trace's records by kind, bytes stored, cache lines, regions, operations",
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := openTrace(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			st, serr := trace.ComputeStats(r)
			if st != nil {
				if err := st.Write(cmd.OutOrStdout()); err != nil {
					return err
				}
			}
			return traceErr(cmd, args[0], serr)
		},
	}
	var remap []string
	verify := &cobra.Command{
		Use:   "verify [--pool OLD=NEW]... TRACE",
		Short: "check that replaying the trace reproduces each pool file byte for byte",
		Long:  "Replays every store and external write of TRACE over zero-filled regions and compares the result with the pool files on disk. Exit status: 0 all match, 1 a mismatch, 2 error.",
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := image.VerifyOptions{PathMap: map[string]string{}}
			for _, m := range remap {
				old, nw, ok := strings.Cut(m, "=")
				if !ok || old == "" || nw == "" {
					return fmt.Errorf("--pool %q: want OLD=NEW", m)
				}
				opts.PathMap[old] = nw
			}
			r, err := openTrace(args[0])
			if err != nil {
				return err
			}
			defer r.Close()
			res, verr := replay.Verify(r, opts)
			if res != nil {
				if err := res.Write(cmd.OutOrStdout()); err != nil {
					return err
				}
			}
			if err := traceErr(cmd, args[0], verr); err != nil {
				return err
			}
			if !res.OK {
				return &statusError{code: 1, msg: "the replayed trace does not match the pool files"}
			}
			return nil
		},
	}
	verify.Flags().StringArrayVar(&remap, "pool", nil, "compare the region of pool `OLD=NEW` path OLD with file NEW")
	c.AddCommand(dump, stats, verify)
	return c
}

func openTrace(path string) (*trace.Reader, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// traceErr turns a reader error into the command's result: a truncated trace is a warning (the
// program was cut short; everything before is valid), anything else an error.
func traceErr(cmd *cobra.Command, path string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, trace.ErrTruncated):
		fmt.Fprintf(cmd.ErrOrStderr(), "scry: warning: %s: %v\n", path, err)
		return nil
	default:
		return fmt.Errorf("%s: %w", path, err)
	}
}
