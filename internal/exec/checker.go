package exec

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// ImagePlaceholder is the word in a checker's command line that [Checker.Run] replaces with the
// shell-quoted path of the crash image.
const ImagePlaceholder = "{image}"

// Checker is the checker oracle (docs/crash-exploration.md, the CLI's
// --checker): a user command run on a crash image, exiting 0 when the image is consistent.
type Checker struct {
	// Args is the command: the shell, "-c", and the user's command line, which contains
	// {image}.
	Args []string
	// Timeout bounds one run; <= 0 means DefaultTimeout. A checker that hangs reports the
	// image inconsistent.
	Timeout time.Duration
	// Env is added to the checker's environment (NAME=VALUE; file-system mode's SCRY_STDOUT).
	Env []string
}

// ParseChecker makes a Checker from a shell command line such as `pmempool check {image}`,
// run by /bin/sh -c so that pipes, && and redirections work. {image} is replaced by the image
// path quoted for the shell, so write it unquoted: `grep -q ok {image}`, not `'{image}'`.
// Errors: an empty command line, or one without {image}.
func ParseChecker(cmdline string) (Checker, error) {
	if strings.TrimSpace(cmdline) == "" {
		return Checker{}, errors.New("empty checker command: give a shell command with {image} where the crash image goes (e.g. 'pmempool check {image}')")
	}
	if !strings.Contains(cmdline, ImagePlaceholder) {
		return Checker{}, fmt.Errorf("checker %q: no %s in the command: write %s where the crash image path goes (e.g. 'pmempool check %s')",
			cmdline, ImagePlaceholder, ImagePlaceholder, ImagePlaceholder)
	}
	return Checker{Args: []string{"/bin/sh", "-c", cmdline}, Timeout: DefaultTimeout}, nil
}

// Run runs the checker on image in working directory dir, with the environment and process-group
// rules of Target.Run and no standard input. Every {image} in the arguments becomes the image's
// absolute path quoted for the shell. The image is consistent iff the outcome did not fail
// (exit status 0): !Run(...).Failed().
func (c Checker) Run(ctx context.Context, image, dir string) Outcome {
	abs, err := filepath.Abs(image)
	if err != nil {
		return Outcome{ExitCode: -1, Err: fmt.Errorf("image path %q: %w", image, err)}
	}
	q := ShellQuote(abs)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, ImagePlaceholder, q)
	}
	return run(ctx, args, c.Env, nil, dir, c.Timeout)
}

// ShellQuote quotes s as one word for a POSIX shell: it puts s between single quotes, inside
// which nothing is expanded, and writes each single quote of s as a closing quote, a
// backslash-escaped quote and an opening quote.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
