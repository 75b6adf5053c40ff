package replay

import (
	"errors"

	"github.com/scry-pm/scry/pm/image"
	"github.com/scry-pm/scry/trace"
)

// Verify replays the whole trace read from r (docs/trace-format.md, "Semantics the analyses
// rely on") and compares, for every pool file, the replayed bytes of its final mapping with the
// file on disk (image.Compare): the trace must rebuild the final file byte for byte.
//
// The final mappings of a path are those not followed by a later mapping of the same path made
// after they were unmapped: a pool opened, closed and reopened is compared through its last
// mapping, whose initial content the runtime re-sends as EXTERNAL_WRITE records flagged
// initial. Inconsistencies of the trace (writes outside every region, unknown unmaps, see the
// package doc) are the result's Warnings and make it not OK; a missing or unreadable file is
// reported in its RegionResult.Err. Verify returns a non-nil error only for the trace: an error
// wrapping trace.ErrTruncated comes with a complete result (the comparison of what the trace
// holds; expect differences); on corruption or an I/O error of the trace the result covers the
// records read before it, and no file is compared.
func Verify(r *trace.Reader, opts image.VerifyOptions) (*image.VerifyResult, error) {
	res := &image.VerifyResult{}
	m, err := New[struct{}](r, Options[struct{}]{Image: true})
	if err != nil {
		return res, err
	}
	terr := m.Run(Nop{})
	res.Records = m.Events
	res.Warnings = m.Warnings()
	_, _, res.Complete = r.End()
	if terr != nil && !errors.Is(terr, trace.ErrTruncated) {
		return res, terr
	}
	res.Regions = image.Compare(m.Image.Regions(), opts)
	res.OK = len(res.Warnings) == 0
	for _, rr := range res.Regions {
		res.OK = res.OK && rr.OK
	}
	return res, terr
}
