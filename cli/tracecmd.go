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
	var dumpOpts trace.DumpOptions
	dump := &cobra.Command{
		Use:   "dump TRACE",
		Short: "print every record of a trace, one per line",
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readTrace(cmd, args[0], func(r *trace.Reader) error {
				return trace.Dump(cmd.OutOrStdout(), r, dumpOpts)
			})
		},
	}
	stats := &cobra.Command{
		Use:   "stats TRACE",
		Short: "count a trace's records by kind, bytes stored, cache lines, regions, operations",
		Args:  exactArgs(1, "a trace file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readTrace(cmd, args[0], func(r *trace.Reader) error {
				st, err := trace.ComputeStats(r)
				if st != nil {
					if werr := st.Write(cmd.OutOrStdout()); werr != nil {
						return werr
					}
				}
				return err
			})
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
			var res *image.VerifyResult
			if err := readTrace(cmd, args[0], func(r *trace.Reader) error {
				var err error
				res, err = replay.Verify(r, opts)
				if res != nil {
					if werr := res.Write(cmd.OutOrStdout()); werr != nil {
						return werr
					}
				}
				return err
			}); err != nil {
				return err
			}
			if !res.OK {
				return &statusError{code: 1, msg: "the replayed trace does not match the pool files"}
			}
			return nil
		},
	}
	verify.Flags().StringArrayVar(&remap, "pool", nil, "compare the region of pool `OLD=NEW` path OLD with file NEW")
	return groupCommand("trace", "inspect a trace: dump, stats, verify", dump, stats, verify)
}

// readTrace opens the trace at path, calls read with its reader and closes it; read's error (the
// reader's, or one of writing the output) is the command's result as traceErr makes it.
func readTrace(cmd *cobra.Command, path string, read func(r *trace.Reader) error) error {
	r, err := trace.Open(path)
	if err != nil {
		return err // names path
	}
	defer r.Close()
	return traceErr(cmd, path, read(r))
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
